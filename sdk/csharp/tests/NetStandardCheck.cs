// Checks that the SDK uses only types .NET Standard 2.0 has (so Unity's .NET
// Standard 2.1 profile and plain .NET have them too): every type the built
// Matchmaker.dll references from another assembly must be one that mono's
// netstandard.dll facade declares or forwards. Read with Mono.Cecil (mono's GAC).
// Usage: mono NetStandardCheck.exe netstandard.dll Matchmaker.dll
using System;
using System.Collections.Generic;
using System.Linq;
using Mono.Cecil;

static class NetStandardCheck
{
    static int Main(string[] args)
    {
        var facade = AssemblyDefinition.ReadAssembly(args[0]).MainModule;
        var known = new HashSet<string>(facade.ExportedTypes.Select(t => t.FullName));
        known.UnionWith(facade.Types.Select(t => t.FullName));
        var sdk = AssemblyDefinition.ReadAssembly(args[1]).MainModule;
        var missing = sdk.GetTypeReferences()
            .Where(r => r.Scope.Name != sdk.Assembly.Name.Name)
            .Select(r => r.IsNested ? r.DeclaringType.FullName + "/" + r.Name : r.FullName)
            .Where(name => !known.Contains(name))
            .Distinct()
            .ToList();
        foreach (var name in missing) Console.WriteLine("not in .NET Standard 2.0: " + name);
        Console.WriteLine("netstandard check: " + sdk.GetTypeReferences().Count() + " referenced types, " + missing.Count + " missing");
        return missing.Count == 0 ? 0 : 1;
    }
}
