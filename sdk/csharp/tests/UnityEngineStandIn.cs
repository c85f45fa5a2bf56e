// The few UnityEngine types samples/Unity uses, so the test build can check the
// sample compiles without Unity. Not shipped; Unity provides the real ones.
namespace UnityEngine
{
    public class MonoBehaviour { }

    [System.AttributeUsage(System.AttributeTargets.Field)]
    public sealed class SerializeField : System.Attribute { }

    public static class Debug
    {
        public static void Log(object message) { System.Console.WriteLine(message); }
        public static void LogWarning(object message) { System.Console.WriteLine(message); }
        public static void LogError(object message) { System.Console.Error.WriteLine(message); }
    }
}
