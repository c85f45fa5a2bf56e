-- Every player's skill per mode, the matches applied (exactly once, by id), and
-- each player's history of changes (one row per version).
CREATE TABLE ratings (
    mode            TEXT NOT NULL,
    player_id       TEXT NOT NULL,
    rating          REAL NOT NULL,
    uncertainty     REAL,
    -- What the leaderboard ranks by: the figure matched on, after decay.
    display         REAL NOT NULL,
    version         INTEGER NOT NULL,
    games           INTEGER NOT NULL,
    last_played_ms  INTEGER NOT NULL,
    PRIMARY KEY (mode, player_id)
);
CREATE INDEX ratings_board ON ratings (mode, display DESC, player_id);

CREATE TABLE rated_matches (
    match_id    TEXT PRIMARY KEY,
    mode        TEXT NOT NULL,
    -- 'scored', or why the match changed no rating.
    outcome     TEXT NOT NULL,
    applied_ms  INTEGER NOT NULL
);

CREATE TABLE rating_history (
    mode             TEXT NOT NULL,
    player_id        TEXT NOT NULL,
    version          INTEGER NOT NULL,
    match_id         TEXT NOT NULL,
    old_rating       REAL NOT NULL,
    old_uncertainty  REAL,
    old_version      INTEGER NOT NULL,
    new_rating       REAL NOT NULL,
    new_uncertainty  REAL,
    rank             INTEGER NOT NULL,
    abandoned        INTEGER NOT NULL,
    at_ms            INTEGER NOT NULL,
    PRIMARY KEY (mode, player_id, version)
);
CREATE INDEX rating_history_match ON rating_history (match_id);
