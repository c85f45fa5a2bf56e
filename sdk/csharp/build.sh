#!/usr/bin/env bash
# Builds the SDK with Debian's mono (mcs) and runs its tests against a real
# `matchmaker serve` (MATCHMAKER_BIN, default: the workspace's debug build).
# Usage: sdk/csharp/build.sh [test name filter...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${CSHARP_OUT:-$here/../../target/sdk-csharp}"
mkdir -p "$out"
refs=(-r:System.Net.Http.dll)
mcs -target:library -langversion:7.2 -warnaserror -debug -out:"$out/Matchmaker.dll" "${refs[@]}" "$here"/src/*.cs
# The Unity sample compiles against a stand-in for the few UnityEngine types it uses.
mcs -target:library -langversion:7.2 -warnaserror -out:"$out/UnitySample.dll" "${refs[@]}" -r:"$out/Matchmaker.dll" \
  "$here"/samples/Unity/*.cs "$here"/tests/UnityEngineStandIn.cs
mcs -target:exe -langversion:7.2 -warnaserror -debug -out:"$out/Matchmaker.Tests.exe" "${refs[@]}" -r:"$out/Matchmaker.dll" \
  "$here"/tests/Harness.cs "$here"/tests/Tests.cs
# Only .NET Standard types: every type Matchmaker.dll references must be in the
# netstandard facade (Mono.Cecil from mono's GAC reads both).
cecil="$(ls /usr/lib/mono/gac/Mono.Cecil/0.11*/Mono.Cecil.dll /usr/lib/mono/gac/Mono.Cecil/*/Mono.Cecil.dll 2>/dev/null | head -1)"
cp "$cecil" "$out/"
mcs -target:exe -langversion:7.2 -warnaserror -out:"$out/NetStandardCheck.exe" -r:"$out/Mono.Cecil.dll" "$here"/tests/NetStandardCheck.cs
mono "$out/NetStandardCheck.exe" /usr/lib/mono/4.5/Facades/netstandard.dll "$out/Matchmaker.dll"
cd "$here"
REPO_ROOT="$(cd "$here/../.." && pwd)" MONO_ENV_OPTIONS=--debug mono "$out/Matchmaker.Tests.exe" "$@"
