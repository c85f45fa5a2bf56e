-- Every player's skill per mode, the matches applied (exactly once, by id), and
-- each player's history of changes (one row per version).
CREATE TABLE ratings (
    mode            TEXT NOT NULL,
    player_id       TEXT NOT NULL,
    rating          DOUBLE PRECISION NOT NULL,
    uncertainty     DOUBLE PRECISION,
    -- What the leaderboard ranks by: the figure matched on, after decay.
    display         DOUBLE PRECISION NOT NULL,
    version         BIGINT NOT NULL,
    games           BIGINT NOT NULL,
    last_played_ms  BIGINT NOT NULL,
    PRIMARY KEY (mode, player_id)
);
CREATE INDEX ratings_board ON ratings (mode, display DESC, player_id);

CREATE TABLE rated_matches (
    match_id    TEXT PRIMARY KEY,
    mode        TEXT NOT NULL,
    -- 'scored', or why the match changed no rating.
    outcome     TEXT NOT NULL,
    applied_ms  BIGINT NOT NULL
);

CREATE TABLE rating_history (
    mode             TEXT NOT NULL,
    player_id        TEXT NOT NULL,
    version          BIGINT NOT NULL,
    match_id         TEXT NOT NULL,
    old_rating       DOUBLE PRECISION NOT NULL,
    old_uncertainty  DOUBLE PRECISION,
    old_version      BIGINT NOT NULL,
    new_rating       DOUBLE PRECISION NOT NULL,
    new_uncertainty  DOUBLE PRECISION,
    rank             INTEGER NOT NULL,
    abandoned        BOOLEAN NOT NULL,
    at_ms            BIGINT NOT NULL,
    PRIMARY KEY (mode, player_id, version)
);
CREATE INDEX rating_history_match ON rating_history (match_id);
