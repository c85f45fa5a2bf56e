// The player's event session over GET /v1/ws: events as they come (the OnEvent
// event, or WaitForAsync), reconnects with exponential backoff and jitter, and
// after every session.ready a read of the live tickets and the assignment, so
// what happened while the socket was down is replayed (Replayed = true)
// instead of missed. Events are raised on a background thread: a Unity game
// hands them to the main thread (see samples/Unity).
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Matchmaker
{
    public sealed class SessionOptions
    {
        /// <summary>First reconnect delay before jitter (default 500 ms); it doubles per failed try.</summary>
        public TimeSpan InitialBackoff = TimeSpan.FromMilliseconds(500);
        /// <summary>Longest reconnect delay (default 30 s).</summary>
        public TimeSpan MaxBackoff = TimeSpan.FromSeconds(30);
        /// <summary>Source of jitter in [0, 1) (default: a Random).</summary>
        public Func<double> Random;
        /// <summary>Awaited before every connection attempt (e.g. until the device is online again).</summary>
        public Func<Task> BeforeConnect;
    }

    /// <summary>The event types a session delivers.</summary>
    public static class EventTypes
    {
        public const string SessionReady = "session.ready";
        public const string SessionDisconnected = "session.disconnected";
        public const string SessionResynced = "session.resynced";
        public const string TicketSearching = "ticket.searching";
        public const string TicketCancelled = "ticket.cancelled";
        public const string TicketTimedOut = "ticket.timed_out";
        public const string ReadyCheck = "match.ready_check";
        public const string Accepted = "match.accepted";
        public const string Placing = "match.placing";
        public const string Assigned = "match.assigned";
        public const string Completed = "match.completed";
        public const string MatchCancelled = "match.cancelled";
        public const string MatchFailed = "match.failed";
        public const string Answer = "match.answer";
        public const string RatingUpdated = "rating.updated";
        public const string PartyInvited = "party.invited";
        public const string PartyUpdated = "party.updated";
        public const string Error = "error";
    }

    /// <summary>One event (the API's Event schema, or the session's own session.* ones).</summary>
    [Schema("Event")]
    public sealed class SessionEvent : JsonView
    {
        public SessionEvent(JsonObject json) : base(json) { }
        [Field("type")] public string Type => Json.GetString("type");
        [Field("ticket_id")] public string TicketId => Json.GetString("ticket_id");
        [Field("match_id")] public string MatchId => Json.GetString("match_id");
        /// <summary>The ready check's deadline (Unix ms).</summary>
        [Field("deadline")] public long? Deadline => Json.GetLong("deadline");
        [Field("match")] public Match Match => Json.GetObject("match") == null ? null : new Match(Json.GetObject("match"));
        [Field("server")] public ServerAssignment Server => Json.GetObject("server") == null ? null : new ServerAssignment(Json.GetObject("server"));
        [Field("result")] public JsonObject Result => Json.GetObject("result");
        [Field("reason")] public string Reason => Json.GetString("reason");
        [Field("requeued")] public bool? Requeued => Json.GetBool("requeued");
        [Field("player_id")] public string PlayerId => Json.GetString("player_id");
        [Field("mode")] public string Mode => Json.GetString("mode");
        /// <summary>rating.updated: the rating before and after ({rating, version, ...}).</summary>
        [Field("old")] public JsonObject Old => Json.GetObject("old");
        [Field("new")] public JsonObject New => Json.GetObject("new");
        [Field("party")] public Party Party => Json.GetObject("party") == null ? null : new Party(Json.GetObject("party"));
        [Field("by")] public string By => Json.GetString("by");
        [Field("change")] public string Change => Json.GetString("change");
        /// <summary>Rebuilt from a read after a reconnect: the socket missed it.</summary>
        public bool Replayed => Json.GetBool("replayed") ?? false;
        /// <summary>session.disconnected: milliseconds until the next try (null: the session stopped).</summary>
        public long? RetryInMs => Json.GetLong("retry_in_ms");
        /// <summary>session.disconnected: the close code (1006: the connection dropped).</summary>
        public long? Code => Json.GetLong("code");
        /// <summary>session.resynced: the assignment read (null: none).</summary>
        public Assignment Assignment => Json.GetObject("assignment") == null ? null : new Assignment(Json.GetObject("assignment"));
    }

    public sealed class Session : IDisposable
    {
        static readonly Dictionary<string, int> MatchRank = new Dictionary<string, int>
        {
            [EventTypes.ReadyCheck] = 1, [EventTypes.Placing] = 2, [EventTypes.Assigned] = 3,
            [EventTypes.Completed] = 4, [EventTypes.MatchCancelled] = 4, [EventTypes.MatchFailed] = 4,
        };

        readonly MatchmakerClient client;
        readonly SessionOptions options;
        readonly Func<double> random;
        readonly CancellationTokenSource stop = new CancellationTokenSource();
        readonly SemaphoreSlim sendLock = new SemaphoreSlim(1, 1);
        readonly object gate = new object();
        readonly Dictionary<string, int> matchRank = new Dictionary<string, int>();
        readonly HashSet<string> ended = new HashSet<string>();
        readonly List<TaskCompletionSource<SessionEvent>> readyWaiters = new List<TaskCompletionSource<SessionEvent>>();
        ClientWebSocket socket;
        Task loop;
        int failures;
        TimeSpan waitAfterClose;
        volatile bool connected;
        volatile SessionEvent lastReady;
        volatile bool closed;

        /// <summary>Every event, raised on a background thread.</summary>
        public event Action<SessionEvent> OnEvent;

        /// <summary>The player, from session.ready.</summary>
        public string PlayerId { get; private set; }

        /// <summary>True while the socket is open and past session.ready.</summary>
        public bool Connected => connected;

        internal Session(MatchmakerClient client, SessionOptions options)
        {
            this.client = client;
            this.options = options;
            var rng = new Random();
            random = options.Random ?? (() => { lock (rng) return rng.NextDouble(); });
        }

        /// <summary>Starts the session (once) and completes at session.ready (at once when already connected); it reconnects on its own after.</summary>
        public Task<SessionEvent> ConnectAsync(CancellationToken ct = default(CancellationToken))
        {
            if (closed) throw new ObjectDisposedException("session");
            var ready = lastReady;
            if (connected && ready != null) return Task.FromResult(ready);
            var tcs = new TaskCompletionSource<SessionEvent>(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (gate)
            {
                readyWaiters.Add(tcs);
                if (loop == null) loop = Task.Run(Run);
            }
            ct.Register(() => tcs.TrySetCanceled());
            return tcs.Task;
        }

        /// <summary>Closes the socket for good: no reconnect.</summary>
        public void Close()
        {
            if (closed) return;
            closed = true;
            connected = false;
            var s = socket;
            if (s == null) stop.Cancel();
            else
            {
                // Say goodbye without blocking the caller (Unity's main thread),
                // then stop the receive loop, which disposes the socket.
                Task.Run(async () =>
                {
                    try
                    {
                        using (var quick = new CancellationTokenSource(TimeSpan.FromSeconds(1)))
                            await s.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "client closed", quick.Token).ConfigureAwait(false);
                    }
                    catch (Exception) { }
                    stop.Cancel();
                });
            }
            Emit(Synth(EventTypes.SessionDisconnected, new JsonObject { ["code"] = 1000L, ["reason"] = "client closed", ["retry_in_ms"] = null }));
        }

        public void Dispose() { Close(); }

        /// <summary>Completes with the next event of this type that satisfies the predicate.</summary>
        public Task<SessionEvent> WaitForAsync(string type, Func<SessionEvent, bool> predicate = null, TimeSpan? timeout = null)
        {
            var tcs = new TaskCompletionSource<SessionEvent>(TaskCreationOptions.RunContinuationsAsynchronously);
            Action<SessionEvent> handler = null;
            handler = e =>
            {
                if (e.Type != type || (predicate != null && !predicate(e))) return;
                OnEvent -= handler;
                tcs.TrySetResult(e);
            };
            OnEvent += handler;
            var limit = timeout ?? TimeSpan.FromSeconds(60);
            var timer = new CancellationTokenSource(limit);
            timer.Token.Register(() =>
            {
                OnEvent -= handler;
                tcs.TrySetException(new TimeoutException("no " + type + " within " + limit));
            });
            tcs.Task.ContinueWith(_ => timer.Dispose(), TaskScheduler.Default);
            return tcs.Task;
        }

        /// <summary>Answers a ready check: on the socket when it is open (the reply is a match.answer event), else over HTTP.</summary>
        public async Task AnswerAsync(string matchId, bool accept)
        {
            var message = new JsonObject { ["type"] = accept ? "match.accept" : "match.decline", ["match_id"] = matchId };
            if (connected && await TrySendAsync(Json.Write(message)).ConfigureAwait(false)) return;
            if (accept) await client.AcceptAsync(matchId).ConfigureAwait(false);
            else await client.DeclineAsync(matchId).ConfigureAwait(false);
        }

        /// <summary>Sends a raw text frame (diagnostics and tests); false when no socket is open or the send failed (the server may close the socket mid-frame).</summary>
        public async Task<bool> TrySendAsync(string text)
        {
            var s = socket;
            if (s == null || s.State != WebSocketState.Open) return false;
            await sendLock.WaitAsync().ConfigureAwait(false);
            try
            {
                await s.SendAsync(new ArraySegment<byte>(Encoding.UTF8.GetBytes(text)), WebSocketMessageType.Text, true, stop.Token).ConfigureAwait(false);
                return true;
            }
            catch (Exception) { return false; }
            finally { sendLock.Release(); }
        }

        async Task Run()
        {
            while (!closed)
            {
                var code = 1006;
                var reason = "";
                var ws = new ClientWebSocket();
                try
                {
                    if (options.BeforeConnect != null) await options.BeforeConnect().ConfigureAwait(false);
                    if (closed) return;
                    var token = await client.CurrentTokenAsync(failures >= 2).ConfigureAwait(false);
                    var url = new UriBuilder(client.BaseUrl + "/v1/ws");
                    url.Scheme = url.Scheme == "https" ? "wss" : "ws";
                    url.Query = "token=" + Uri.EscapeDataString(token);
                    waitAfterClose = TimeSpan.Zero;
                    await ws.ConnectAsync(url.Uri, stop.Token).ConfigureAwait(false);
                    socket = ws;
                    await Receive(ws).ConfigureAwait(false);
                    if (ws.CloseStatus.HasValue)
                    {
                        code = (int)ws.CloseStatus.Value;
                        reason = ws.CloseStatusDescription ?? "";
                    }
                }
                catch (Exception e) when (!(e is OutOfMemoryException))
                {
                    reason = e.Message;
                }
                finally
                {
                    socket = null;
                    connected = false;
                    ws.Dispose();
                }
                if (closed) return;
                var initial = options.InitialBackoff.TotalMilliseconds;
                var baseMs = Math.Min(options.MaxBackoff.TotalMilliseconds, initial * Math.Pow(2, Math.Min(failures, 30)));
                var delay = Math.Max(Math.Round(baseMs / 2 + baseMs / 2 * random(), MidpointRounding.AwayFromZero), waitAfterClose.TotalMilliseconds);
                failures++;
                Emit(Synth(EventTypes.SessionDisconnected, new JsonObject { ["code"] = (long)code, ["reason"] = reason, ["retry_in_ms"] = (long)delay }));
                try { await Task.Delay(TimeSpan.FromMilliseconds(delay), stop.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { return; }
            }
        }

        async Task Receive(ClientWebSocket ws)
        {
            var buffer = new byte[8192];
            var message = new MemoryStream();
            while (ws.State == WebSocketState.Open)
            {
                var r = await ws.ReceiveAsync(new ArraySegment<byte>(buffer), stop.Token).ConfigureAwait(false);
                if (r.MessageType == WebSocketMessageType.Close) return;
                message.Write(buffer, 0, r.Count);
                if (!r.EndOfMessage) continue;
                var text = Encoding.UTF8.GetString(message.GetBuffer(), 0, (int)message.Length);
                message.SetLength(0);
                JsonObject o;
                try { o = Json.ParseObject(text); } catch (JsonException) { continue; }
                Received(new SessionEvent(o));
            }
        }

        void Received(SessionEvent e)
        {
            switch (e.Type)
            {
                case EventTypes.SessionReady:
                    failures = 0;
                    PlayerId = e.PlayerId;
                    lastReady = e;
                    connected = true;
                    Emit(e);
                    List<TaskCompletionSource<SessionEvent>> waiters;
                    lock (gate)
                    {
                        waiters = readyWaiters.ToList();
                        readyWaiters.Clear();
                    }
                    foreach (var w in waiters) w.TrySetResult(e);
                    Task.Run(() => Resync(0));
                    return;
                case EventTypes.Error:
                    var wait = e.Json.GetObject("error")?.GetLong("retry_after_ms");
                    if (wait.HasValue) waitAfterClose = TimeSpan.FromMilliseconds(wait.Value);
                    Emit(e);
                    return;
                default:
                    Deliver(e, false);
                    return;
            }
        }

        /// <summary>Delivers a server event unless the player was already told as much (or more).</summary>
        void Deliver(SessionEvent e, bool replayed)
        {
            lock (gate)
            {
                int rank;
                if (e.MatchId != null && MatchRank.TryGetValue(e.Type, out rank))
                {
                    int seen;
                    matchRank.TryGetValue(e.MatchId, out seen);
                    if (replayed && seen >= rank) return;
                    matchRank[e.MatchId] = Math.Max(seen, rank);
                }
                if (e.TicketId != null)
                {
                    var ends = e.Type == EventTypes.TicketCancelled || e.Type == EventTypes.TicketTimedOut || e.Type == EventTypes.Completed
                        || ((e.Type == EventTypes.MatchCancelled || e.Type == EventTypes.MatchFailed) && e.Requeued == false);
                    if (replayed && ends && ended.Contains(e.TicketId)) return;
                    if (ends)
                    {
                        ended.Add(e.TicketId);
                        client.Settled(e.TicketId);
                    }
                }
            }
            if (replayed) e.Json["replayed"] = true;
            Emit(e);
        }

        /// <summary>Reads the assignment and every live ticket; replays what the socket missed.</summary>
        async Task Resync(int attempt)
        {
            Assignment assignment;
            List<Ticket> tickets;
            try
            {
                // All at once, as the TypeScript session does.
                var reading = client.GetAssignmentAsync();
                var reads = client.LiveTickets.Select(async id =>
                {
                    try { return await client.GetTicketAsync(id).ConfigureAwait(false); }
                    catch (NotFoundException) { client.Settled(id); return null; }
                }).ToList();
                assignment = await reading.ConfigureAwait(false);
                tickets = (await Task.WhenAll(reads).ConfigureAwait(false)).Where(t => t != null).ToList();
            }
            catch (Exception e) when (!(e is OutOfMemoryException))
            {
                if (connected && attempt < 3)
                {
                    await Task.Delay(1000 * (attempt + 1)).ConfigureAwait(false);
                    await Resync(attempt + 1).ConfigureAwait(false);
                }
                else
                {
                    Emit(Synth(EventTypes.Error, new JsonObject { ["error"] = new JsonObject { ["code"] = "resync_failed", ["message"] = e.Message } }));
                }
                return;
            }
            if (assignment != null)
            {
                var ticketId = tickets.FirstOrDefault(t => t.MatchId == assignment.MatchId)?.Id
                    ?? assignment.Match.Tickets.FirstOrDefault(t => PlayerId != null && t.Players.Contains(PlayerId))?.TicketId;
                if (ticketId != null)
                {
                    var o = new JsonObject { ["ticket_id"] = ticketId, ["match_id"] = assignment.MatchId, ["match"] = assignment.Match.Json };
                    if (assignment.Status == "requires_acceptance" && assignment.Deadline.HasValue)
                    {
                        o["deadline"] = assignment.Deadline.Value;
                        Deliver(Synth(EventTypes.ReadyCheck, o), true);
                    }
                    else if (assignment.Status == "placing")
                    {
                        Deliver(Synth(EventTypes.Placing, o), true);
                    }
                    else if (assignment.Status == "assigned" && assignment.Server != null)
                    {
                        o["server"] = assignment.Server.Json;
                        Deliver(Synth(EventTypes.Assigned, o), true);
                    }
                }
            }
            foreach (var t in tickets.Where(t => t.IsOver))
            {
                var reason = t.Reason ?? t.Status;
                var o = new JsonObject { ["ticket_id"] = t.Id };
                if (t.Status == "completed" && t.MatchId != null)
                {
                    try
                    {
                        var record = await client.GetMatchAsync(t.MatchId).ConfigureAwait(false);
                        o["match_id"] = t.MatchId;
                        o["match"] = record.Match.Json;
                        o["result"] = record.Result;
                        Deliver(Synth(EventTypes.Completed, o), true);
                    }
                    catch (MatchmakerException) { /* aged out of the player's history */ }
                }
                else if (t.Status == "cancelled")
                {
                    o["reason"] = reason;
                    Deliver(Synth(EventTypes.TicketCancelled, o), true);
                }
                else if (t.Status == "timed_out")
                {
                    o["reason"] = reason;
                    Deliver(Synth(EventTypes.TicketTimedOut, o), true);
                }
                else if (t.Status == "failed")
                {
                    o["match_id"] = t.MatchId ?? "";
                    o["reason"] = reason;
                    o["requeued"] = false;
                    Deliver(Synth(EventTypes.MatchFailed, o), true);
                }
                client.Settled(t.Id);
            }
            if (connected)
            {
                Emit(Synth(EventTypes.SessionResynced, new JsonObject
                {
                    ["assignment"] = assignment?.Json,
                    ["tickets"] = tickets.Select(t => (object)t.Json).ToList(),
                }));
            }
        }

        static SessionEvent Synth(string type, JsonObject fields)
        {
            var o = new JsonObject { ["type"] = type };
            foreach (var kv in fields) o[kv.Key] = kv.Value;
            return new SessionEvent(o);
        }

        void Emit(SessionEvent e)
        {
            var handlers = OnEvent;
            if (handlers == null) return;
            foreach (Action<SessionEvent> h in handlers.GetInvocationList())
            {
                try { h(e); }
                catch (Exception) { /* a handler's failure must not stop the session */ }
            }
        }
    }
}
