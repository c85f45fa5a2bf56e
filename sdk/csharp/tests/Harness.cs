// Test support: a minimal runner ([Test] methods, run in order, one line each),
// a real `matchmaker serve` (and the example game server) on free ports, and an
// event recorder for sessions.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Matchmaker;

namespace Matchmaker.Tests
{
    [AttributeUsage(AttributeTargets.Method)]
    sealed class TestAttribute : Attribute { }

    static class Assert
    {
        public static void True(bool condition, string what)
        {
            if (!condition) throw new Exception("assertion failed: " + what);
        }

        public static void Equal<T>(T expected, T actual, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
                throw new Exception(what + ": expected " + expected + ", got " + actual);
        }

        public static async Task<E> Throws<E>(Func<Task> action, string what) where E : Exception
        {
            try { await action(); }
            catch (E e) { return e; }
            catch (Exception e) { throw new Exception(what + ": expected " + typeof(E).Name + ", got " + e.GetType().Name + ": " + e.Message); }
            throw new Exception(what + ": expected " + typeof(E).Name + ", nothing was thrown");
        }
    }

    static class Runner
    {
        static int Main(string[] args)
        {
            var tests = typeof(Runner).Assembly.GetTypes()
                .SelectMany(t => t.GetMethods(BindingFlags.Public | BindingFlags.Static))
                .Where(m => m.GetCustomAttribute<TestAttribute>() != null)
                .Where(m => args.Length == 0 || args.Any(a => m.Name.Contains(a)))
                .ToList();
            var failed = 0;
            foreach (var t in tests)
            {
                var watch = Stopwatch.StartNew();
                try
                {
                    var task = (Task)t.Invoke(null, null);
                    if (!task.Wait(TimeSpan.FromSeconds(90))) throw new TimeoutException("the test did not finish in 90 s");
                    Console.WriteLine("ok   " + t.DeclaringType.Name + "." + t.Name + " (" + watch.ElapsedMilliseconds + " ms)");
                }
                catch (Exception e)
                {
                    failed++;
                    var inner = e is TargetInvocationException || e is AggregateException ? e.GetBaseException() : e;
                    Console.WriteLine("FAIL " + t.DeclaringType.Name + "." + t.Name + ": " + inner);
                }
            }
            Services.StopAll();
            Console.WriteLine(tests.Count - failed + " passed, " + failed + " failed");
            return failed == 0 && tests.Count > 0 ? 0 : 1;
        }
    }

    /// <summary>A running `matchmaker serve` (dev tokens, the shipped modes).</summary>
    sealed class Service
    {
        public string BaseUrl;
        public readonly List<Process> Procs = new List<Process>();
        public readonly StringBuilder Log = new StringBuilder();
        public string Dir;

        public MatchmakerClient Client(string player) { return new MatchmakerClient(BaseUrl, player); }
    }

    static class Services
    {
        static readonly List<Service> all = new List<Service>();

        public static string RepoRoot => Environment.GetEnvironmentVariable("REPO_ROOT") ?? Path.GetFullPath("../..");

        static string Binary()
        {
            var bin = Environment.GetEnvironmentVariable("MATCHMAKER_BIN") ?? Path.Combine(RepoRoot, "target/debug/matchmaker");
            if (!File.Exists(bin)) throw new Exception("no matchmaker binary at " + bin + ": build it or set MATCHMAKER_BIN");
            return bin;
        }

        public static int FreePort()
        {
            var l = new TcpListener(IPAddress.Loopback, 0);
            l.Start();
            var port = ((IPEndPoint)l.LocalEndpoint).Port;
            l.Stop();
            return port;
        }

        static Process Start(Service s, string name, string args, Dictionary<string, string> env)
        {
            var info = new ProcessStartInfo(Binary(), args)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            foreach (var kv in env) info.EnvironmentVariables[kv.Key] = kv.Value;
            var p = new Process { StartInfo = info };
            DataReceivedEventHandler log = (_, e) => { if (e.Data != null) lock (s.Log) s.Log.AppendLine(name + ": " + e.Data); };
            p.OutputDataReceived += log;
            p.ErrorDataReceived += log;
            p.Start();
            p.BeginOutputReadLine();
            p.BeginErrorReadLine();
            s.Procs.Add(p);
            return p;
        }

        public static async Task<Service> StartAsync(bool gameServer, Dictionary<string, string> extra = null)
        {
            var s = new Service { Dir = Path.Combine(Path.GetTempPath(), "mm-sdk-cs-" + Guid.NewGuid().ToString("N")) };
            Directory.CreateDirectory(s.Dir);
            lock (all) all.Add(s);
            var http = "127.0.0.1:" + FreePort();
            var grpc = "127.0.0.1:" + FreePort();
            var env = new Dictionary<string, string>
            {
                ["LISTEN_ADDR"] = http, ["GRPC_LISTEN_ADDR"] = grpc, ["DATA_DIR"] = s.Dir, ["AUTH"] = "dev",
                ["RUST_LOG"] = "warn", ["POLL_INTERVAL"] = "20ms", ["RATING_POLL_INTERVAL"] = "20ms",
                ["SERVER_HEARTBEAT_INTERVAL"] = "200ms", ["SUPERVISE_INTERVAL"] = "200ms",
            };
            if (extra != null) foreach (var kv in extra) env[kv.Key] = kv.Value;
            var serve = Start(s, "serve", "serve", env);
            s.BaseUrl = "http://" + http;
            using (var h = new HttpClient())
            {
                await Until("serve to be ready", async () =>
                {
                    if (serve.HasExited) throw new Exception("serve exited:\n" + s.Log);
                    try { return (await h.GetAsync(s.BaseUrl + "/readyz")).IsSuccessStatusCode; }
                    catch (HttpRequestException) { return false; }
                });
            }
            if (gameServer)
            {
                var gs = Start(s, "game-server", "example-game-server", new Dictionary<string, string>
                {
                    ["SERVER_MANAGER_URL"] = "http://" + grpc, ["GAME_SERVER_REGION"] = "eu", ["GAME_SERVER_CAPACITY"] = "8",
                    ["MATCH_DURATION"] = "1s", ["RUST_LOG"] = "warn",
                });
                await Until("the game server to register", () =>
                {
                    if (gs.HasExited) throw new Exception("game server exited:\n" + s.Log);
                    lock (s.Log) return Task.FromResult(s.Log.ToString().Contains("\"event\":\"registered\""));
                });
            }
            return s;
        }

        public static void StopAll()
        {
            lock (all)
            {
                foreach (var s in all)
                {
                    foreach (var p in s.Procs)
                    {
                        try { if (!p.HasExited) p.Kill(); } catch (Exception) { }
                    }
                    try { Directory.Delete(s.Dir, true); } catch (Exception) { }
                }
                all.Clear();
            }
        }

        public static async Task Until(string what, Func<Task<bool>> check, int timeoutMs = 20000)
        {
            var end = DateTime.UtcNow.AddMilliseconds(timeoutMs);
            while (!await check())
            {
                if (DateTime.UtcNow > end) throw new TimeoutException("timed out waiting for " + what);
                await Task.Delay(50);
            }
        }
    }

    /// <summary>Every event of a session, so a test can wait for one that came before it asked.</summary>
    sealed class Recorder
    {
        readonly List<SessionEvent> events = new List<SessionEvent>();
        readonly string name;

        public Recorder(Session s, string name)
        {
            this.name = name;
            s.OnEvent += e => { lock (events) events.Add(e); };
        }

        public List<SessionEvent> All { get { lock (events) return events.ToList(); } }

        public async Task<SessionEvent> Next(string type, Func<SessionEvent, bool> predicate = null, int timeoutMs = 20000)
        {
            SessionEvent found = null;
            await Services.Until(type + " for " + name, () =>
            {
                found = All.FirstOrDefault(e => e.Type == type && (predicate == null || predicate(e)));
                return Task.FromResult(found != null);
            }, timeoutMs);
            return found;
        }
    }
}
