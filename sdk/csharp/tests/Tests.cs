// The C# SDK against a real `serve`: the same scenarios as the TypeScript SDK's.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;
using Matchmaker;

namespace Matchmaker.Tests
{
    static class Flows
    {
        static Task<Service> shared;
        static Task<Service> Shared() { return shared ?? (shared = Services.StartAsync(true)); }

        [Test]
        public static async Task OneVsOneFromQueueToRating()
        {
            var svc = await Shared();
            var alice = svc.Client("alice");
            var bob = svc.Client("bob");
            using (var sa = alice.CreateSession())
            using (var sb = bob.CreateSession())
            {
                var a = new Recorder(sa, "alice");
                var b = new Recorder(sb, "bob");
                Assert.Equal("alice", (await sa.ConnectAsync()).PlayerId, "session.ready");
                await sb.ConnectAsync();
                Assert.Equal("alice", (await sa.ConnectAsync()).PlayerId, "connecting a connected session answers at once");

                var ta = await alice.CreateTicketAsync(new TicketRequest("1v1", "alice").InRegion("eu"));
                Assert.Equal("queued", ta.Status, "new ticket");
                Assert.Equal(null, ta.EstimatedWaitMs, "no estimate before any match");
                var tb = await bob.CreateTicketAsync(new TicketRequest("1v1").InRegion("eu", 20));
                Assert.Equal("bob", string.Join(",", tb.Players), "players left out: the caller alone");

                var check = await a.Next(EventTypes.ReadyCheck, e => e.TicketId == ta.Id);
                var checkB = await b.Next(EventTypes.ReadyCheck, e => e.TicketId == tb.Id);
                Assert.Equal(check.MatchId, checkB.MatchId, "one match");
                Assert.True(check.Deadline > DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), "deadline ahead");
                Assert.Equal("requires_acceptance", (await alice.GetTicketAsync(ta.Id)).Status, "ticket follows the match");

                await sa.AnswerAsync(check.MatchId, true); // on the socket
                var answer = await a.Next(EventTypes.Answer, e => e.MatchId == check.MatchId);
                Assert.Equal("requires_acceptance", answer.Json.GetString("status"), "answer status");
                var rec = await bob.AcceptAsync(check.MatchId); // over HTTP
                Assert.Equal("accepted", rec.Answers.GetString("bob"), "bob's answer");

                var assigned = await a.Next(EventTypes.Assigned, e => e.MatchId == check.MatchId);
                Assert.Equal("127.0.0.1:7777", assigned.Server.Address, "server address");
                await b.Next(EventTypes.Assigned, e => e.MatchId == check.MatchId);
                var assignment = await alice.GetAssignmentAsync();
                Assert.Equal(check.MatchId, assignment.MatchId, "assignment");
                Assert.Equal("assigned", assignment.Status, "assignment status");

                var completed = await a.Next(EventTypes.Completed, e => e.MatchId == check.MatchId);
                Assert.True(completed.Result != null, "the game server's result");
                var rated = await a.Next(EventTypes.RatingUpdated, e => e.MatchId == check.MatchId);
                Assert.Equal("1v1", rated.Mode, "rated mode");
                Assert.Equal(1L, rated.New.GetLong("version"), "first rating");
                await b.Next(EventTypes.RatingUpdated, e => e.MatchId == check.MatchId);

                var ratings = await alice.GetRatingsAsync();
                Assert.Equal(rated.New.GetDouble("rating"), ratings.For("1v1").Rating, "rating read back");
                Assert.Equal(1, (await alice.GetRatingHistoryAsync("1v1")).Entries.Count, "history");
                Assert.Equal(check.MatchId, (await alice.ListMatchesAsync()).Matches[0].Id, "match list");
                Assert.Equal("completed", (await alice.GetTicketAsync(ta.Id)).Status, "ticket completed");
                Assert.True(await alice.GetAssignmentAsync() == null, "no assignment after the match");
                var board = await alice.GetLeaderboardAsync("1v1", aroundMe: true);
                Assert.True(board.Entries.Any(e => e.PlayerId == "alice"), "on the leaderboard");
                Assert.Equal("1v1", (await alice.GetQueueStatsAsync("1v1")).Mode, "queue stats");
            }
        }

        [Test]
        public static async Task PartyOfThreeQueues5v5()
        {
            var svc = await Shared();
            var names = new[] { "p-lead", "p-two", "p-three" }.Concat(Enumerable.Range(0, 7).Select(i => "solo-" + i)).ToList();
            var clients = names.Select(n => svc.Client(n)).ToList();
            var sessions = clients.Select(c => c.CreateSession()).ToList();
            try
            {
                var recs = sessions.Select((s, i) => new Recorder(s, names[i])).ToList();
                await Task.WhenAll(sessions.Select(s => s.ConnectAsync()));
                var leader = clients[0];
                var party = await leader.CreatePartyAsync();
                Assert.Equal("p-lead", party.Leader, "leader");
                await leader.InviteAsync(party.Id, "p-two");
                await leader.InviteAsync(party.Id, "p-three");
                var invited = await recs[1].Next(EventTypes.PartyInvited, e => e.Party.Id == party.Id);
                Assert.Equal("p-lead", invited.By, "invited by");
                await clients[1].JoinPartyAsync(party.Id);
                await clients[2].JoinPartyAsync(party.Id);
                var mine = await clients[1].GetMyPartyAsync();
                Assert.Equal("p-lead,p-two,p-three", string.Join(",", mine.Members), "members");

                var partyTicket = await leader.CreateTicketAsync(new TicketRequest("5v5", mine.Members.ToArray()).InRegion("eu"));
                for (var i = 3; i < 10; i++) await clients[i].CreateTicketAsync(new TicketRequest("5v5", names[i]).InRegion("eu"));

                var checks = await Task.WhenAll(recs.Select(r => r.Next(EventTypes.ReadyCheck)));
                var matchId = checks[0].MatchId;
                Assert.True(checks.All(c => c.MatchId == matchId), "all ten in one match");
                Assert.Equal(partyTicket.Id, checks[2].TicketId, "a member's check names the party's ticket");
                await Task.WhenAll(clients.Select(c => c.AcceptAsync(matchId)));
                var assigned = await Task.WhenAll(recs.Select(r => r.Next(EventTypes.Assigned, e => e.MatchId == matchId)));
                var match = assigned[0].Match;
                var entry = match.Tickets.First(t => t.TicketId == partyTicket.Id);
                Assert.Equal(3, entry.Players.Count, "the party is one ticket");
                var teamSize = match.Tickets.Where(t => t.Team == entry.Team).Sum(t => t.Players.Count);
                Assert.Equal(5, teamSize, "the party's team");
            }
            finally
            {
                foreach (var s in sessions) s.Close();
            }
        }

        /// <summary>A session that reconnects 300 ms after a drop (no jitter), but only once `gate` completes.</summary>
        static Session Gated(MatchmakerClient client, TaskCompletionSource<bool> gate)
        {
            var connects = 0;
            return client.CreateSession(new SessionOptions
            {
                InitialBackoff = TimeSpan.FromMilliseconds(300),
                Random = () => 1,
                BeforeConnect = () => Interlocked.Increment(ref connects) == 1 ? Task.CompletedTask : (Task)gate.Task,
            });
        }

        [Test]
        public static async Task ServerClosesTheSocketAndTheReadyCheckIsReplayed()
        {
            var svc = await Shared();
            var carol = svc.Client("carol");
            var dave = svc.Client("dave");
            // Carol's session comes back only after Dave was told of the match,
            // so Carol's socket surely missed it.
            var gate = new TaskCompletionSource<bool>();
            using (var sc = Gated(carol, gate))
            using (var sd = dave.CreateSession())
            {
                var c = new Recorder(sc, "carol");
                var d = new Recorder(sd, "dave");
                await Task.WhenAll(sc.ConnectAsync(), sd.ConnectAsync());
                // A frame over the server's 64 KiB limit: the server closes the socket.
                // It may do so on reading the frame's header, before the client has
                // written the rest, so the send itself may fail: only the drop counts.
                Assert.True(sc.Connected, "connected before the oversized frame");
                await sc.TrySendAsync(new string('x', 70 * 1024));
                var dropped = await c.Next(EventTypes.SessionDisconnected);
                Assert.Equal(300L, dropped.RetryInMs, "retry delay");

                var tc = await carol.CreateTicketAsync(new TicketRequest("1v1", "carol").InRegion("eu"));
                await dave.CreateTicketAsync(new TicketRequest("1v1", "dave").InRegion("eu"));
                var live = await d.Next(EventTypes.ReadyCheck);
                Assert.True(!live.Replayed, "dave's came live");
                gate.SetResult(true);

                var replayed = await c.Next(EventTypes.ReadyCheck);
                Assert.True(replayed.Replayed, "carol's is replayed");
                Assert.Equal(tc.Id, replayed.TicketId, "ticket");
                Assert.Equal(live.MatchId, replayed.MatchId, "match");
                Assert.Equal(live.Deadline, replayed.Deadline, "deadline");
                Assert.Equal(2, c.All.Count(e => e.Type == EventTypes.SessionReady), "two session.ready");
                var resynced = await c.Next(EventTypes.SessionResynced, e => e.Assignment != null);
                Assert.Equal("requires_acceptance", resynced.Assignment.Status, "resynced assignment");

                await sc.AnswerAsync(replayed.MatchId, true);
                await dave.AcceptAsync(live.MatchId);
                var assigned = await c.Next(EventTypes.Assigned, e => e.MatchId == live.MatchId);
                Assert.True(!assigned.Replayed, "assigned came live");
                Assert.Equal(1, c.All.Count(e => e.Type == EventTypes.ReadyCheck), "told once");
            }
        }

        [Test]
        public static async Task ATicketThatEndedWhileAwayIsReplayed()
        {
            var svc = await Shared();
            var erin = svc.Client("erin");
            var gate = new TaskCompletionSource<bool>();
            using (var se = Gated(erin, gate))
            {
                var e = new Recorder(se, "erin");
                await se.ConnectAsync();
                var ticket = await erin.CreateTicketAsync(new TicketRequest("1v1", "erin").InRegion("eu"));
                await se.TrySendAsync(new string('x', 70 * 1024));
                await e.Next(EventTypes.SessionDisconnected);
                await svc.Client("erin").CancelTicketAsync(ticket.Id);
                gate.SetResult(true);
                var cancelled = await e.Next(EventTypes.TicketCancelled);
                Assert.True(cancelled.Replayed, "replayed");
                Assert.Equal(ticket.Id, cancelled.TicketId, "ticket");
                Assert.True(!erin.LiveTickets.Contains(ticket.Id), "no longer watched");
            }
        }

        [Test]
        public static async Task TheTokenProviderIsAskedAgainAfterA401()
        {
            var svc = await Shared();
            var calls = new List<bool>();
            var client = new MatchmakerClient(new ClientOptions
            {
                BaseUrl = svc.BaseUrl,
                // Dev tokens must be player ids: the first is refused, the refreshed one is good.
                Token = refresh => { lock (calls) calls.Add(refresh); return Task.FromResult(refresh ? "frank" : "not a player id!"); },
            });
            Assert.Equal("frank", (await client.GetRatingsAsync()).PlayerId, "refreshed token used");
            Assert.Equal("False,True", string.Join(",", calls), "provider calls");
            var never = new MatchmakerClient(svc.BaseUrl, "still bad!");
            var e = await Assert.Throws<UnauthorizedException>(() => never.GetRatingsAsync(), "bad token");
            Assert.Equal(401, e.Status, "status");
        }

        [Test]
        public static async Task ReconnectDelaysBackOffWithJitterUpToTheCap()
        {
            var port = Services.FreePort(); // nothing listens here
            var draws = new[] { 0, 0.5, 1, 0.25, 0.75 };
            var i = 0;
            var client = new MatchmakerClient("http://127.0.0.1:" + port, "gina");
            using (var s = client.CreateSession(new SessionOptions
            {
                InitialBackoff = TimeSpan.FromMilliseconds(20),
                MaxBackoff = TimeSpan.FromMilliseconds(100),
                Random = () => draws[i++ % draws.Length],
            }))
            {
                var r = new Recorder(s, "gina");
                var pending = s.ConnectAsync(); // never completes: nothing listens
                await Services.Until("five tries", () => Task.FromResult(r.All.Count(e => e.Type == EventTypes.SessionDisconnected) >= 5));
                var delays = r.All.Where(e => e.Type == EventTypes.SessionDisconnected).Take(5).Select(e => e.RetryInMs.Value);
                // base 20, 40, 80, 100, 100; delay = base/2 + base/2 * draw
                Assert.Equal("10,30,80,63,88", string.Join(",", delays), "delays");
                Assert.True(!pending.IsCompleted, "never ready");
            }
        }
    }

    static class Errors
    {
        static Task<Service> limited;
        // Reads: a burst of 3 per player, one more every second.
        static Task<Service> Limited()
        {
            return limited ?? (limited = Services.StartAsync(false, new Dictionary<string, string> { ["RATE_LIMIT_READS"] = "3/3s,6000/1m" }));
        }

        [Test]
        public static async Task ErrorsAreTypedFromTheApisCodes()
        {
            var svc = await Limited();
            var hank = svc.Client("hank");
            var bad = await Assert.Throws<BadRequestException>(() => hank.CreateTicketAsync(new TicketRequest("nope", "hank").InRegion("eu")), "unknown mode");
            Assert.Equal(ErrorCodes.UnknownMode, bad.Code, "code");
            var t = await hank.CreateTicketAsync(new TicketRequest("1v1", "hank").InRegion("eu"));
            var busy = await Assert.Throws<ConflictException>(() => hank.CreateTicketAsync(new TicketRequest("1v1", "hank").InRegion("eu")), "second ticket");
            Assert.Equal(ErrorCodes.PlayerBusy, busy.Code, "code");
            Assert.Equal(t.Id, busy.Details.GetString("ticket_id"), "busy names the live ticket");
            await Assert.Throws<NotFoundException>(() => svc.Client("ivy").GetTicketAsync(t.Id), "another player's ticket");
            Assert.Equal("cancelled", (await hank.CancelTicketAsync(t.Id)).Status, "cancelled");
            Assert.True(await hank.GetMyPartyAsync() == null, "no party");
            Assert.True(await hank.GetAssignmentAsync() == null, "no assignment");
        }

        [Test]
        public static async Task A429IsRetriedAfterItsRetryAfter()
        {
            var svc = await Limited();
            var counting = new CountingHandler();
            var jane = new MatchmakerClient(new ClientOptions { BaseUrl = svc.BaseUrl, Token = _ => Task.FromResult("jane"), Handler = counting });
            for (var i = 0; i < 5; i++) await jane.GetRatingsAsync();
            Assert.True(counting.Statuses.Contains(429), "a read was limited: " + string.Join(",", counting.Statuses));
            Assert.Equal(200, counting.Statuses.Last(), "and then answered");

            var impatient = new MatchmakerClient(new ClientOptions { BaseUrl = svc.BaseUrl, Token = _ => Task.FromResult("kim"), MaxRetries = 0 });
            RateLimitedException limitedError = null;
            for (var i = 0; i < 5 && limitedError == null; i++)
            {
                try { await impatient.GetRatingsAsync(); }
                catch (RateLimitedException e) { limitedError = e; }
            }
            Assert.True(limitedError != null, "limited without retries");
            Assert.Equal(ErrorCodes.RateLimited, limitedError.Code, "code");
            Assert.True(limitedError.RetryAfter >= TimeSpan.FromSeconds(1), "Retry-After");
        }

        sealed class CountingHandler : System.Net.Http.DelegatingHandler
        {
            public readonly List<int> Statuses = new List<int>();
            public CountingHandler() : base(new System.Net.Http.HttpClientHandler()) { }
            protected override async Task<System.Net.Http.HttpResponseMessage> SendAsync(System.Net.Http.HttpRequestMessage request, System.Threading.CancellationToken ct)
            {
                var r = await base.SendAsync(request, ct);
                lock (Statuses) Statuses.Add((int)r.StatusCode);
                return r;
            }
        }
    }

    static class Contract
    {
        /// <summary>Every model names a schema of docs/openapi.json, and every field it reads is in that schema.</summary>
        [Test]
        public static Task ModelsMatchTheOpenApiDocument()
        {
            var doc = Json.ParseObject(File.ReadAllText(Path.Combine(Services.RepoRoot, "docs/openapi.json")));
            var schemas = doc.GetObject("components").GetObject("schemas");
            var models = typeof(JsonView).Assembly.GetTypes().Where(t => t.GetCustomAttribute<SchemaAttribute>() != null).ToList();
            Assert.True(models.Count >= 15, "models found: " + models.Count);
            foreach (var m in models)
            {
                var name = m.GetCustomAttribute<SchemaAttribute>().Name;
                var schema = schemas.GetObject(name);
                Assert.True(schema != null, m.Name + " reads schema " + name + ", which docs/openapi.json lacks");
                var fields = new HashSet<string>();
                Collect(schemas, schema, fields);
                foreach (var p in m.GetProperties())
                {
                    var f = p.GetCustomAttribute<FieldAttribute>();
                    if (f == null) continue;
                    Assert.True(fields.Contains(f.Name), m.Name + "." + p.Name + " reads " + f.Name + ", which schema " + name + " lacks");
                }
            }
            return Task.CompletedTask;
        }

        /// <summary>ErrorCodes names every code the API answers with, and no other (the ErrorCode schema of docs/openapi.json).</summary>
        [Test]
        public static Task ErrorCodesAreTheApis()
        {
            var doc = Json.ParseObject(File.ReadAllText(Path.Combine(Services.RepoRoot, "docs/openapi.json")));
            var known = new HashSet<string>(doc.GetObject("components").GetObject("schemas").GetObject("ErrorCode").GetStrings("enum"));
            Assert.True(known.Count >= 50, "codes in the document: " + known.Count);
            var fields = typeof(ErrorCodes).GetFields(BindingFlags.Public | BindingFlags.Static).Where(f => f.IsLiteral).ToList();
            var ours = new HashSet<string>();
            foreach (var f in fields)
            {
                var code = (string)f.GetRawConstantValue();
                Assert.True(known.Contains(code), "ErrorCodes." + f.Name + " = " + code + ", which the API does not answer with");
                ours.Add(code);
            }
            foreach (var code in known)
                Assert.True(ours.Contains(code), "the API answers with " + code + ", which ErrorCodes lacks");
            return Task.CompletedTask;
        }

        /// <summary>The property names of a schema, through $ref, allOf and oneOf.</summary>
        static void Collect(JsonObject schemas, JsonObject schema, HashSet<string> into)
        {
            if (schema == null) return;
            var reference = schema.GetString("$ref");
            if (reference != null) Collect(schemas, schemas.GetObject(reference.Substring(reference.LastIndexOf('/') + 1)), into);
            var props = schema.GetObject("properties");
            if (props != null) foreach (var k in props.Keys) into.Add(k);
            foreach (var key in new[] { "allOf", "oneOf", "anyOf" })
            {
                var list = schema.GetArray(key);
                if (list != null) foreach (var s in list.OfType<JsonObject>()) Collect(schemas, s, into);
            }
        }

        [Test]
        public static Task JsonReadsAndWritesWhatTheApiSends()
        {
            var o = Json.ParseObject("{\"a\":[1,2.5,-3e2,\"x\\u00e9\\n\",true,null],\"b\":{\"c\":\"\\\"q\\\"\"}}");
            var a = o.GetArray("a");
            Assert.Equal(1L, (long)a[0], "integer");
            Assert.Equal(2.5, (double)a[1], "fraction");
            Assert.Equal(-300.0, (double)a[2], "exponent");
            Assert.Equal("x\u00e9\n", (string)a[3], "escapes");
            Assert.Equal("{\"a\":[1,2.5,-300,\"x\u00e9\\n\",true,null],\"b\":{\"c\":\"\\\"q\\\"\"}}", Json.Write(o), "written back");
            foreach (var bad in new[] { "{", "[1,]", "{\"a\" 1}", "tru", "\"open", "{} x" })
            {
                var threw = false;
                try { Json.Parse(bad); } catch (JsonException) { threw = true; }
                Assert.True(threw, "malformed: " + bad);
            }
            return Task.CompletedTask;
        }
    }
}
