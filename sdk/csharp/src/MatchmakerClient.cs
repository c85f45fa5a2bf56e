// The HTTP client: one async method per API call a game client makes. It owns
// authentication (a token provider asked again after a 401), retries of 429 and
// 503 answers after their Retry-After, and typed errors.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Matchmaker
{
    /// <summary>Returns the bearer token; refresh is true after a 401 (fetch a new one).</summary>
    public delegate Task<string> TokenProvider(bool refresh);

    public sealed class ClientOptions
    {
        /// <summary>The API's base URL, e.g. https://mm.example.com.</summary>
        public string BaseUrl;
        public TokenProvider Token;
        /// <summary>Retries of a 429 or 503 answer, each after its Retry-After (default 3).</summary>
        public int MaxRetries = 3;
        /// <summary>A longer Retry-After is not waited for: the error is thrown (default 30 s).</summary>
        public TimeSpan MaxRetryWait = TimeSpan.FromSeconds(30);
        /// <summary>For trusted backends (service tokens): act for this player (X-Player-Id).</summary>
        public string ActAs;
        /// <summary>The handler under HttpClient (default: the platform's).</summary>
        public HttpMessageHandler Handler;
    }

    public sealed class MatchmakerClient : IDisposable
    {
        readonly ClientOptions options;
        readonly HttpClient http;
        readonly SemaphoreSlim tokenLock = new SemaphoreSlim(1, 1);
        string token;
        readonly HashSet<string> liveTickets = new HashSet<string>();

        public readonly string BaseUrl;

        /// <summary>A client with a fixed token.</summary>
        public MatchmakerClient(string baseUrl, string token)
            : this(new ClientOptions { BaseUrl = baseUrl, Token = _ => Task.FromResult(token) }) { }

        public MatchmakerClient(ClientOptions options)
        {
            if (options?.BaseUrl == null || options.Token == null) throw new ArgumentException("BaseUrl and Token are required");
            this.options = options;
            BaseUrl = options.BaseUrl.TrimEnd('/');
            http = options.Handler == null ? new HttpClient() : new HttpClient(options.Handler, false);
        }

        public void Dispose() { http.Dispose(); }

        /// <summary>The current token, asking the provider when there is none yet or refresh is set.</summary>
        public async Task<string> CurrentTokenAsync(bool refresh = false)
        {
            await tokenLock.WaitAsync().ConfigureAwait(false);
            try
            {
                if (token == null || refresh) token = await options.Token(refresh).ConfigureAwait(false);
                return token;
            }
            finally { tokenLock.Release(); }
        }

        /// <summary>Tickets this client created that may still be live (sessions re-read them after a reconnect).</summary>
        public IReadOnlyCollection<string> LiveTickets { get { lock (liveTickets) return new List<string>(liveTickets); } }

        internal void Track(string ticketId) { lock (liveTickets) liveTickets.Add(ticketId); }
        internal void Settled(string ticketId) { lock (liveTickets) liveTickets.Remove(ticketId); }

        static string Esc(string s) { return Uri.EscapeDataString(s); }

        /// <summary>Sends a request; returns the parsed body (null for an empty one, or a 404 when allowed).</summary>
        public async Task<JsonObject> SendAsync(HttpMethod method, string path, JsonObject body = null, bool allow404 = false, CancellationToken ct = default(CancellationToken))
        {
            var refreshed = false;
            for (var attempt = 0; ; attempt++)
            {
                var req = new HttpRequestMessage(method, BaseUrl + path);
                req.Headers.TryAddWithoutValidation("Authorization", "Bearer " + await CurrentTokenAsync().ConfigureAwait(false));
                req.Headers.TryAddWithoutValidation("Accept", "application/json");
                if (options.ActAs != null) req.Headers.TryAddWithoutValidation("X-Player-Id", options.ActAs);
                if (body != null) req.Content = new StringContent(Json.Write(body), Encoding.UTF8, "application/json");
                HttpResponseMessage res;
                try
                {
                    res = await http.SendAsync(req, ct).ConfigureAwait(false);
                }
                catch (HttpRequestException e)
                {
                    throw new MatchmakerException(0, "network_error", method + " " + path + ": " + e.Message, inner: e);
                }
                using (res)
                {
                    var text = await res.Content.ReadAsStringAsync().ConfigureAwait(false);
                    JsonObject parsed = null;
                    if (!string.IsNullOrEmpty(text))
                    {
                        try { parsed = Json.Parse(text) as JsonObject; } catch (JsonException) { parsed = null; }
                    }
                    var status = (int)res.StatusCode;
                    if (res.IsSuccessStatusCode) return parsed;
                    if (status == 404 && allow404) return null;
                    if (status == 401 && !refreshed)
                    {
                        refreshed = true;
                        await CurrentTokenAsync(true).ConfigureAwait(false);
                        continue;
                    }
                    var wait = RetryAfter(res, parsed);
                    if ((status == 429 || status == 503) && attempt < options.MaxRetries && (wait ?? TimeSpan.FromSeconds(1)) <= options.MaxRetryWait)
                    {
                        await Task.Delay(wait ?? TimeSpan.FromSeconds(1), ct).ConfigureAwait(false);
                        continue;
                    }
                    throw MatchmakerException.For(status, parsed, wait);
                }
            }
        }

        static TimeSpan? RetryAfter(HttpResponseMessage res, JsonObject body)
        {
            IEnumerable<string> values;
            if (res.Headers.TryGetValues("Retry-After", out values))
            {
                foreach (var v in values)
                {
                    int secs;
                    if (int.TryParse(v.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out secs)) return TimeSpan.FromSeconds(secs);
                }
            }
            var ms = body?.GetObject("error")?.GetLong("retry_after_ms");
            return ms.HasValue ? TimeSpan.FromMilliseconds(ms.Value) : (TimeSpan?)null;
        }

        Task<JsonObject> Get(string path, CancellationToken ct) { return SendAsync(HttpMethod.Get, path, null, false, ct); }
        Task<JsonObject> Post(string path, JsonObject body, CancellationToken ct) { return SendAsync(HttpMethod.Post, path, body, false, ct); }

        /// <summary>Opens a session on the player's event socket (call ConnectAsync on it).</summary>
        public Session CreateSession(SessionOptions sessionOptions = null) { return new Session(this, sessionOptions ?? new SessionOptions()); }

        // Tickets

        /// <summary>Queues a ticket: the caller alone, or the caller's party (leader only).</summary>
        public async Task<Ticket> CreateTicketAsync(TicketRequest request, CancellationToken ct = default(CancellationToken))
        {
            var t = new Ticket(await Post("/v1/tickets", request.ToJson(), ct).ConfigureAwait(false));
            Track(t.Id);
            return t;
        }

        public async Task<Ticket> GetTicketAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            return new Ticket(await Get("/v1/tickets/" + Esc(id), ct).ConfigureAwait(false));
        }

        /// <summary>Cancels a ticket not yet in a match (ConflictException ticket_matched once it is).</summary>
        public async Task<Ticket> CancelTicketAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            return new Ticket(await SendAsync(HttpMethod.Delete, "/v1/tickets/" + Esc(id), null, false, ct).ConfigureAwait(false));
        }

        // Parties

        public async Task<Party> CreatePartyAsync(CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Post("/v1/parties", null, ct).ConfigureAwait(false));
        }

        public async Task<Party> GetPartyAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Get("/v1/parties/" + Esc(id), ct).ConfigureAwait(false));
        }

        /// <summary>The caller's party, or null when they are in none.</summary>
        public async Task<Party> GetMyPartyAsync(CancellationToken ct = default(CancellationToken))
        {
            try { return new Party(await Get("/v1/players/me/party", ct).ConfigureAwait(false)); }
            catch (NotFoundException e) when (e.Code == ErrorCodes.NoParty) { return null; }
        }

        public async Task<Party> InviteAsync(string partyId, string playerId, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Post("/v1/parties/" + Esc(partyId) + "/invites", new JsonObject { ["player_id"] = playerId }, ct).ConfigureAwait(false));
        }

        public async Task<Party> JoinPartyAsync(string partyId, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Post("/v1/parties/" + Esc(partyId) + "/join", null, ct).ConfigureAwait(false));
        }

        public async Task<Party> LeavePartyAsync(string partyId, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Post("/v1/parties/" + Esc(partyId) + "/leave", null, ct).ConfigureAwait(false));
        }

        public async Task<Party> KickAsync(string partyId, string playerId, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await Post("/v1/parties/" + Esc(partyId) + "/kick", new JsonObject { ["player_id"] = playerId }, ct).ConfigureAwait(false));
        }

        public async Task<Party> DisbandPartyAsync(string partyId, CancellationToken ct = default(CancellationToken))
        {
            return new Party(await SendAsync(HttpMethod.Delete, "/v1/parties/" + Esc(partyId), null, false, ct).ConfigureAwait(false));
        }

        // Matches

        public async Task<MatchRecord> GetMatchAsync(string id, CancellationToken ct = default(CancellationToken))
        {
            return new MatchRecord(await Get("/v1/matches/" + Esc(id), ct).ConfigureAwait(false));
        }

        /// <summary>The caller's matches, newest first.</summary>
        public async Task<MatchList> ListMatchesAsync(int? limit = null, CancellationToken ct = default(CancellationToken))
        {
            return new MatchList(await Get("/v1/players/me/matches" + (limit.HasValue ? "?limit=" + limit.Value : ""), ct).ConfigureAwait(false));
        }

        public async Task<MatchRecord> AcceptAsync(string matchId, CancellationToken ct = default(CancellationToken))
        {
            return new MatchRecord(await Post("/v1/matches/" + Esc(matchId) + "/accept", null, ct).ConfigureAwait(false));
        }

        public async Task<MatchRecord> DeclineAsync(string matchId, CancellationToken ct = default(CancellationToken))
        {
            return new MatchRecord(await Post("/v1/matches/" + Esc(matchId) + "/decline", null, ct).ConfigureAwait(false));
        }

        /// <summary>The caller's match that is not over (Server.Address once assigned), or null.</summary>
        public async Task<Assignment> GetAssignmentAsync(CancellationToken ct = default(CancellationToken))
        {
            var o = await SendAsync(HttpMethod.Get, "/v1/players/me/assignment", null, true, ct).ConfigureAwait(false);
            return o == null ? null : new Assignment(o);
        }

        // Ratings

        public async Task<Ratings> GetRatingsAsync(CancellationToken ct = default(CancellationToken))
        {
            return new Ratings(await Get("/v1/players/me/ratings", ct).ConfigureAwait(false));
        }

        public async Task<RatingHistory> GetRatingHistoryAsync(string mode, int? limit = null, CancellationToken ct = default(CancellationToken))
        {
            var q = "?mode=" + Esc(mode) + (limit.HasValue ? "&limit=" + limit.Value : "");
            return new RatingHistory(await Get("/v1/players/me/ratings/history" + q, ct).ConfigureAwait(false));
        }

        public async Task<Leaderboard> GetLeaderboardAsync(string mode, int? limit = null, bool aroundMe = false, CancellationToken ct = default(CancellationToken))
        {
            var q = new List<string>();
            if (limit.HasValue) q.Add("limit=" + limit.Value);
            if (aroundMe) q.Add("around=me");
            var path = "/v1/leaderboards/" + Esc(mode) + (q.Count > 0 ? "?" + string.Join("&", q) : "");
            return new Leaderboard(await Get(path, ct).ConfigureAwait(false));
        }

        /// <summary>A mode's queue figures per region: players waiting, matches per minute, time to match.</summary>
        public async Task<QueueStats> GetQueueStatsAsync(string mode, CancellationToken ct = default(CancellationToken))
        {
            return new QueueStats(await Get("/v1/queues/" + Esc(mode), ct).ConfigureAwait(false));
        }

        // Blocks

        /// <summary>The caller's block list (at most 200 players).</summary>
        public async Task<BlockList> GetBlocksAsync(CancellationToken ct = default(CancellationToken))
        {
            return new BlockList(await Get("/v1/players/me/blocks", ct).ConfigureAwait(false));
        }

        /// <summary>Blocks a player: never in one match with the caller, tickets already waiting included once this completes.</summary>
        public async Task<BlockList> BlockAsync(string playerId, CancellationToken ct = default(CancellationToken))
        {
            return new BlockList(await SendAsync(HttpMethod.Put, "/v1/players/me/blocks/" + Esc(playerId), null, false, ct).ConfigureAwait(false));
        }

        /// <summary>Unblocks a player, tickets already waiting included once this completes.</summary>
        public async Task<BlockList> UnblockAsync(string playerId, CancellationToken ct = default(CancellationToken))
        {
            return new BlockList(await SendAsync(HttpMethod.Delete, "/v1/players/me/blocks/" + Esc(playerId), null, false, ct).ConfigureAwait(false));
        }
    }
}
