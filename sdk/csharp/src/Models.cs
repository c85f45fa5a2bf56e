// The API's bodies as typed views over the parsed JSON: each class names the
// OpenAPI schema it reads ([Schema]) and each property its field ([Field]);
// a test checks both against docs/openapi.json, so they cannot drift. The raw
// object stays in Json for fields this version does not name.
using System;
using System.Collections.Generic;
using System.Linq;

namespace Matchmaker
{
    /// <summary>The OpenAPI schema a model reads.</summary>
    [AttributeUsage(AttributeTargets.Class)]
    public sealed class SchemaAttribute : Attribute
    {
        public readonly string Name;
        public SchemaAttribute(string name) { Name = name; }
    }

    /// <summary>The JSON field a property reads.</summary>
    [AttributeUsage(AttributeTargets.Property)]
    public sealed class FieldAttribute : Attribute
    {
        public readonly string Name;
        public FieldAttribute(string name) { Name = name; }
    }

    /// <summary>A view over one JSON object of the API.</summary>
    public abstract class JsonView
    {
        public readonly JsonObject Json;
        protected JsonView(JsonObject json) { Json = json ?? new JsonObject(); }
        public override string ToString() { return Json.ToString(); }
        protected static List<T> Each<T>(List<object> items, Func<JsonObject, T> make)
        {
            return items == null ? new List<T>() : items.OfType<JsonObject>().Select(make).ToList();
        }
    }

    [Schema("TicketView")]
    public sealed class Ticket : JsonView
    {
        public Ticket(JsonObject json) : base(json) { }
        [Field("id")] public string Id => Json.GetString("id");
        /// <summary>queued, searching, requires_acceptance, placing, assigned, completed, cancelled, timed_out, failed.</summary>
        [Field("status")] public string Status => Json.GetString("status");
        [Field("reason")] public string Reason => Json.GetString("reason");
        [Field("mode")] public string Mode => Json.GetString("mode");
        /// <summary>Its best region; once that region was closed while it waited, the region it waits in.</summary>
        [Field("region")] public string Region => Json.GetString("region");
        [Field("players")] public List<string> Players => Json.GetStrings("players");
        [Field("rating")] public double Rating => Json.GetDouble("rating") ?? 0;
        [Field("enqueued_at")] public long EnqueuedAt => Json.GetLong("enqueued_at") ?? 0;
        [Field("time_in_queue_ms")] public long TimeInQueueMs => Json.GetLong("time_in_queue_ms") ?? 0;
        /// <summary>While it waits: the pool's recent median wait for tickets like it; null with too little data.</summary>
        [Field("estimated_wait_ms")] public long? EstimatedWaitMs => Json.GetLong("estimated_wait_ms");
        [Field("match_id")] public string MatchId => Json.GetString("match_id");
        [Field("co_players")] public List<string> CoPlayers => Json.GetStrings("co_players");
        [Field("team")] public int? Team => (int?)Json.GetLong("team");
        public bool IsOver => Status == "completed" || Status == "cancelled" || Status == "timed_out" || Status == "failed";
    }

    [Schema("MatchTicket")]
    public sealed class MatchTicket : JsonView
    {
        public MatchTicket(JsonObject json) : base(json) { }
        [Field("ticket_id")] public string TicketId => Json.GetString("ticket_id");
        [Field("players")] public List<string> Players => Json.GetStrings("players");
        [Field("rating")] public double Rating => Json.GetDouble("rating") ?? 0;
        [Field("team")] public int? Team => (int?)Json.GetLong("team");
    }

    [Schema("Match")]
    public sealed class Match : JsonView
    {
        public Match(JsonObject json) : base(json) { }
        [Field("id")] public string Id => Json.GetString("id");
        [Field("mode")] public string Mode => Json.GetString("mode");
        [Field("region")] public string Region => Json.GetString("region");
        [Field("created_at")] public long CreatedAt => Json.GetLong("created_at") ?? 0;
        [Field("tickets")] public List<MatchTicket> Tickets => Each(Json.GetArray("tickets"), o => new MatchTicket(o));
        /// <summary>Values the rules chose (e.g. the map), by attribute.</summary>
        [Field("chosen")] public JsonObject Chosen => Json.GetObject("chosen") ?? new JsonObject();
        /// <summary>The role each player was given, by player id.</summary>
        [Field("roles")] public JsonObject Roles => Json.GetObject("roles") ?? new JsonObject();
    }

    [Schema("ServerAssignment")]
    public sealed class ServerAssignment : JsonView
    {
        public ServerAssignment(JsonObject json) : base(json) { }
        [Field("server_id")] public string ServerId => Json.GetString("server_id");
        /// <summary>Where to connect.</summary>
        [Field("address")] public string Address => Json.GetString("address");
    }

    [Schema("MatchRecord")]
    public sealed class MatchRecord : JsonView
    {
        public MatchRecord(JsonObject json) : base(json) { }
        [Field("status")] public string Status => Json.GetString("status");
        [Field("reason")] public string Reason => Json.GetString("reason");
        [Field("deadline")] public long? Deadline => Json.GetLong("deadline");
        [Field("match")] public Match Match => new Match(Json.GetObject("match"));
        /// <summary>Ready-check answers by player: accepted or declined.</summary>
        [Field("answers")] public JsonObject Answers => Json.GetObject("answers") ?? new JsonObject();
        [Field("server")] public ServerAssignment Server => Json.GetObject("server") == null ? null : new ServerAssignment(Json.GetObject("server"));
        [Field("result")] public JsonObject Result => Json.GetObject("result");
    }

    [Schema("Assignment")]
    public sealed class Assignment : JsonView
    {
        public Assignment(JsonObject json) : base(json) { }
        [Field("match_id")] public string MatchId => Json.GetString("match_id");
        [Field("status")] public string Status => Json.GetString("status");
        [Field("deadline")] public long? Deadline => Json.GetLong("deadline");
        [Field("match")] public Match Match => new Match(Json.GetObject("match"));
        [Field("server")] public ServerAssignment Server => Json.GetObject("server") == null ? null : new ServerAssignment(Json.GetObject("server"));
    }

    [Schema("MatchList")]
    public sealed class MatchList : JsonView
    {
        public MatchList(JsonObject json) : base(json) { }
        [Field("player_id")] public string PlayerId => Json.GetString("player_id");
        [Field("matches")] public List<Match> Matches => Each(Json.GetArray("matches"), o => new Match(o));
    }

    [Schema("PartyView")]
    public sealed class Party : JsonView
    {
        public Party(JsonObject json) : base(json) { }
        [Field("id")] public string Id => Json.GetString("id");
        [Field("leader")] public string Leader => Json.GetString("leader");
        [Field("members")] public List<string> Members => Json.GetStrings("members");
        [Field("invites")] public List<string> Invites => Json.GetStrings("invites");
        [Field("created_at")] public long CreatedAt => Json.GetLong("created_at") ?? 0;
    }

    [Schema("ModeRatingView")]
    public sealed class ModeRating : JsonView
    {
        public ModeRating(JsonObject json) : base(json) { }
        [Field("mode")] public string Mode => Json.GetString("mode");
        [Field("model")] public string Model => Json.GetString("model");
        [Field("rating")] public double Rating => Json.GetDouble("rating") ?? 0;
        [Field("uncertainty")] public double? Uncertainty => Json.GetDouble("uncertainty");
        [Field("matchmaking_rating")] public double MatchmakingRating => Json.GetDouble("matchmaking_rating") ?? 0;
        [Field("games")] public long Games => Json.GetLong("games") ?? 0;
        [Field("version")] public long Version => Json.GetLong("version") ?? 0;
    }

    [Schema("RatingsView")]
    public sealed class Ratings : JsonView
    {
        public Ratings(JsonObject json) : base(json) { }
        [Field("player_id")] public string PlayerId => Json.GetString("player_id");
        [Field("ratings")] public List<ModeRating> Modes => Each(Json.GetArray("ratings"), o => new ModeRating(o));
        public ModeRating For(string mode) { return Modes.FirstOrDefault(r => r.Mode == mode); }
    }

    [Schema("HistoryView")]
    public sealed class RatingHistory : JsonView
    {
        public RatingHistory(JsonObject json) : base(json) { }
        [Field("mode")] public string Mode => Json.GetString("mode");
        [Field("history")] public List<JsonObject> Entries => Json.GetArray("history")?.OfType<JsonObject>().ToList() ?? new List<JsonObject>();
    }

    [Schema("BoardEntry")]
    public sealed class BoardEntry : JsonView
    {
        public BoardEntry(JsonObject json) : base(json) { }
        [Field("rank")] public long Rank => Json.GetLong("rank") ?? 0;
        [Field("player_id")] public string PlayerId => Json.GetString("player_id");
        [Field("rating")] public double Rating => Json.GetDouble("rating") ?? 0;
    }

    [Schema("BoardView")]
    public sealed class Leaderboard : JsonView
    {
        public Leaderboard(JsonObject json) : base(json) { }
        [Field("mode")] public string Mode => Json.GetString("mode");
        [Field("entries")] public List<BoardEntry> Entries => Each(Json.GetArray("entries"), o => new BoardEntry(o));
        [Field("player_rank")] public long? PlayerRank => Json.GetLong("player_rank");
        [Field("age_ms")] public long AgeMs => Json.GetLong("age_ms") ?? 0;
    }

    [Schema("QueueStats")]
    public sealed class QueueStats : JsonView
    {
        public QueueStats(JsonObject json) : base(json) { }
        [Field("mode")] public string Mode => Json.GetString("mode");
        /// <summary>The mode takes no new ticket; its waiting tickets end timed_out (mode_closed).</summary>
        [Field("closed")] public bool Closed => Json.GetBool("closed") ?? false;
        /// <summary>Per region: tickets_waiting, closed (the region takes no new ticket), last_5m and last_15m figures.</summary>
        [Field("regions")] public List<JsonObject> Regions => Json.GetArray("regions")?.OfType<JsonObject>().ToList() ?? new List<JsonObject>();
    }

    [Schema("BlockList")]
    public sealed class BlockList : JsonView
    {
        public BlockList(JsonObject json) : base(json) { }
        [Field("blocks")] public List<string> Blocks => Json.GetStrings("blocks");
    }

    /// <summary>A region a ticket may play in, with the latency the client measured (if it did).</summary>
    public sealed class RegionChoice
    {
        public string Region;
        public int? LatencyMs;
        public RegionChoice(string region, int? latencyMs = null) { Region = region; LatencyMs = latencyMs; }
    }

    /// <summary>The body of POST /v1/tickets (schema CreateTicket).</summary>
    public sealed class TicketRequest
    {
        public string Mode;
        /// <summary>The caller's party (the leader queues it); left empty, the caller alone.</summary>
        public List<string> Players = new List<string>();
        public List<RegionChoice> Regions = new List<RegionChoice>();
        /// <summary>Attributes for the mode's rules: strings, numbers, lists of strings.</summary>
        public Dictionary<string, object> Attributes;

        public TicketRequest(string mode, params string[] players) { Mode = mode; Players.AddRange(players); }

        public TicketRequest InRegion(string region, int? latencyMs = null)
        {
            Regions.Add(new RegionChoice(region, latencyMs));
            return this;
        }

        public JsonObject ToJson()
        {
            var o = new JsonObject { ["mode"] = Mode };
            if (Players.Count > 0) o["players"] = Players;
            if (Regions.Count > 0)
            {
                o["regions"] = Regions.Select(r =>
                {
                    var x = new JsonObject { ["region"] = r.Region };
                    if (r.LatencyMs.HasValue) x["latency_ms"] = (long)r.LatencyMs.Value;
                    return (object)x;
                }).ToList();
            }
            if (Attributes != null) o["attributes"] = Attributes;
            return o;
        }
    }
}
