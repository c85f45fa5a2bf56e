// A small JSON reader and writer, so the SDK needs no package Unity or .NET
// Standard 2.1 lacks: objects read as JsonObject (string keys, insertion order
// kept), arrays as List<object>, strings, long or double, bool and null.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Matchmaker
{
    /// <summary>A JSON object with typed getters that tolerate missing keys and nulls.</summary>
    public sealed class JsonObject : Dictionary<string, object>
    {
        public JsonObject() : base(StringComparer.Ordinal) { }

        public object Get(string key) { object v; return TryGetValue(key, out v) ? v : null; }
        public string GetString(string key) { return Get(key) as string; }
        public JsonObject GetObject(string key) { return Get(key) as JsonObject; }
        public List<object> GetArray(string key) { return Get(key) as List<object>; }

        public long? GetLong(string key)
        {
            var v = Get(key);
            if (v is long) return (long)v;
            if (v is double) return (long)(double)v;
            return null;
        }

        public double? GetDouble(string key)
        {
            var v = Get(key);
            if (v is long) return (long)v;
            if (v is double) return (double)v;
            return null;
        }

        public bool? GetBool(string key) { var v = Get(key); return v is bool ? (bool?)(bool)v : null; }

        public List<string> GetStrings(string key)
        {
            var list = new List<string>();
            var a = GetArray(key);
            if (a != null) foreach (var x in a) if (x is string) list.Add((string)x);
            return list;
        }

        public override string ToString() { return Json.Write(this); }
    }

    /// <summary>Malformed JSON.</summary>
    public sealed class JsonException : Exception
    {
        public JsonException(string message) : base(message) { }
    }

    public static class Json
    {
        public static object Parse(string text)
        {
            var r = new Reader(text);
            r.SkipSpace();
            var value = r.Value(0);
            r.SkipSpace();
            if (r.Pos != text.Length) throw new JsonException("trailing characters at " + r.Pos);
            return value;
        }

        public static JsonObject ParseObject(string text)
        {
            var o = Parse(text) as JsonObject;
            if (o == null) throw new JsonException("expected a JSON object");
            return o;
        }

        public static string Write(object value)
        {
            var sb = new StringBuilder();
            WriteValue(sb, value);
            return sb.ToString();
        }

        static void WriteValue(StringBuilder sb, object v)
        {
            if (v == null) { sb.Append("null"); return; }
            if (v is string) { WriteString(sb, (string)v); return; }
            if (v is bool) { sb.Append((bool)v ? "true" : "false"); return; }
            if (v is int || v is long || v is short || v is uint || v is ulong)
            {
                sb.Append(Convert.ToString(v, CultureInfo.InvariantCulture));
                return;
            }
            if (v is double || v is float || v is decimal)
            {
                var d = Convert.ToDouble(v, CultureInfo.InvariantCulture);
                if (double.IsNaN(d) || double.IsInfinity(d)) throw new JsonException("JSON has no NaN or infinity");
                sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
                return;
            }
            var dict = v as System.Collections.IDictionary;
            if (dict != null)
            {
                sb.Append('{');
                var first = true;
                foreach (System.Collections.DictionaryEntry e in dict)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, (string)e.Key);
                    sb.Append(':');
                    WriteValue(sb, e.Value);
                }
                sb.Append('}');
                return;
            }
            var list = v as System.Collections.IEnumerable;
            if (list != null)
            {
                sb.Append('[');
                var first = true;
                foreach (var x in list)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteValue(sb, x);
                }
                sb.Append(']');
                return;
            }
            throw new JsonException("cannot write a " + v.GetType().Name + " as JSON");
        }

        static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (var c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        sealed class Reader
        {
            readonly string s;
            public int Pos;
            public Reader(string text) { s = text ?? throw new JsonException("no JSON"); }

            JsonException Fail(string what) { return new JsonException(what + " at " + Pos); }

            public void SkipSpace()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\t' || s[Pos] == '\n' || s[Pos] == '\r')) Pos++;
            }

            public object Value(int depth)
            {
                if (depth > 128) throw Fail("nested too deep");
                if (Pos >= s.Length) throw Fail("unexpected end");
                var c = s[Pos];
                if (c == '{') return Object(depth);
                if (c == '[') return Array(depth);
                if (c == '"') return String();
                if (c == 't') return Word("true", true);
                if (c == 'f') return Word("false", false);
                if (c == 'n') return Word("null", null);
                if (c == '-' || (c >= '0' && c <= '9')) return Number();
                throw Fail("unexpected '" + c + "'");
            }

            object Word(string word, object value)
            {
                if (string.CompareOrdinal(s, Pos, word, 0, word.Length) != 0) throw Fail("expected " + word);
                Pos += word.Length;
                return value;
            }

            JsonObject Object(int depth)
            {
                var o = new JsonObject();
                Pos++;
                SkipSpace();
                if (Pos < s.Length && s[Pos] == '}') { Pos++; return o; }
                for (;;)
                {
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != '"') throw Fail("expected a key");
                    var key = String();
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != ':') throw Fail("expected ':'");
                    Pos++;
                    SkipSpace();
                    o[key] = Value(depth + 1);
                    SkipSpace();
                    if (Pos >= s.Length) throw Fail("unexpected end");
                    if (s[Pos] == ',') { Pos++; continue; }
                    if (s[Pos] == '}') { Pos++; return o; }
                    throw Fail("expected ',' or '}'");
                }
            }

            List<object> Array(int depth)
            {
                var a = new List<object>();
                Pos++;
                SkipSpace();
                if (Pos < s.Length && s[Pos] == ']') { Pos++; return a; }
                for (;;)
                {
                    SkipSpace();
                    a.Add(Value(depth + 1));
                    SkipSpace();
                    if (Pos >= s.Length) throw Fail("unexpected end");
                    if (s[Pos] == ',') { Pos++; continue; }
                    if (s[Pos] == ']') { Pos++; return a; }
                    throw Fail("expected ',' or ']'");
                }
            }

            string String()
            {
                var sb = new StringBuilder();
                Pos++;
                while (Pos < s.Length)
                {
                    var c = s[Pos++];
                    if (c == '"') return sb.ToString();
                    if (c != '\\') { sb.Append(c); continue; }
                    if (Pos >= s.Length) break;
                    var e = s[Pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (Pos + 4 > s.Length) throw Fail("bad \\u escape");
                            sb.Append((char)int.Parse(s.Substring(Pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                            Pos += 4;
                            break;
                        default: throw Fail("bad escape");
                    }
                }
                throw Fail("unterminated string");
            }

            object Number()
            {
                var start = Pos;
                if (s[Pos] == '-') Pos++;
                var integral = true;
                while (Pos < s.Length)
                {
                    var c = s[Pos];
                    if (c >= '0' && c <= '9') { Pos++; continue; }
                    if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { integral = false; Pos++; continue; }
                    break;
                }
                var text = s.Substring(start, Pos - start);
                long l;
                if (integral && long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l)) return l;
                double d;
                if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) return d;
                throw Fail("bad number");
            }
        }
    }
}
