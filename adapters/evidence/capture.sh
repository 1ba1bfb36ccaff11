#!/usr/bin/env bash
# capture.sh — record what the agent CLIs' own help says, for panehost's adapters.
#
# Usage:
#   bash adapters/evidence/capture.sh [CACHE_DIR]
#
#   CACHE_DIR  where the CLIs are installed, one npm prefix per runtime
#              (CACHE_DIR/<runtime>). Default:
#              ${PANEHOST_CLI_CACHE:-$HOME/.cache/panehost/clis}
#
#   CAPTURE_ONLY="codex claude"   optional: capture only these runtimes
#   CAPTURE_TIMEOUT=60            optional: seconds allowed per command
#
# What it does, per runtime (codex, claude, gemini, opencode, qwen, copilot,
# grok):
#   1. Installs the PINNED package version below into its own npm prefix,
#      never globally:  npm install --prefix DIR --no-fund --no-audit PKG@VER
#      (skipped when that prefix already holds exactly that version).
#   2. Makes a fresh scratch HOME (mktemp -d), which is also the working
#      directory, and runs the CLI under `env -i` with only PATH (node's
#      directory + the prefix's node_modules/.bin), HOME, LANG=C.UTF-8,
#      TERM=dumb, plus the runtime's self-update / network switches:
#        claude   DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
#        copilot  COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false
#        opencode OPENCODE_DISABLE_AUTOUPDATE=1
#      Commands: `--version`, `--help`, then the help of the subcommands
#      adapters rely on (SUBS below); those in OPTS run only when the
#      top-level help lists the subcommand.
#      Each command runs in its own session / process group (setsid), with
#      stdin from /dev/null, stdout+stderr merged, and a timeout. Afterwards
#      the whole group is killed, and so is any other process still carrying
#      the scratch HOME in its environment (a daemon that left the group),
#      each by pid. Their names are recorded as `leftover_processes`.
#   3. Writes adapters/evidence/<runtime>.json:
#        runtime, package, pinned_version (what was installed),
#        version (as printed by --version, trimmed; when it prints several
#        lines, the first line holding a dotted version number),
#        executable (bin name), resolved (`readlink -f` of the bin link,
#        under `<cache>`), sha256 (of that file),
#        captured_on (date -u +%F), commands: [{args, exit_code, output}]
#      Output has ANSI escapes stripped; the install root is written as
#      `<cache>` and the scratch HOME as `<home>`. A command that hit the
#      timeout has "timed_out": true and exit_code 124.
#      If the install fails, or no command exits 0, the file carries `error`
#      (the installer's own words, or the commands as they ran); nothing is
#      made up.
#
# A runtime from PyPI (REGISTRY[...]=pypi) is a virtual environment in
# CACHE_DIR/<runtime> instead of an npm prefix, made by /usr/bin/python3, or,
# where PYTHON[...] names a version, by an interpreter of that version:
# $PANEHOST_PYTHON_3_13 (for 3.13), python3.13 on PATH, or pyenv's
# ${PYENV_ROOT:-~/.pyenv}/versions/3.13.*; its record then says "python".
#
# Needs: bash, node + npm, python3 (it runs each command in a new session,
# i.e. setsid(), and writes the JSON), sha256sum, readlink, mktemp, date.
set -euo pipefail

EVIDENCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_DIR="${1:-${PANEHOST_CLI_CACHE:-$HOME/.cache/panehost/clis}}"
TIMEOUT="${CAPTURE_TIMEOUT:-60}"
CAPTURED_ON="$(date -u +%F)"
export CAPTURED_ON

# runtime -> npm package, pinned version, bin name.
# grok: the facts file names 1.0.1, but the registry publishes only 0.0.34
# of @vibe-kit/grok-cli (`npm view @vibe-kit/grok-cli versions`).
RUNTIMES=(codex claude gemini opencode qwen copilot grok droid qoder amp hermes kimi omp pi deepseek)
declare -A PKG VER BIN ENVS SUBS OPTS EXTRA ALLOW REGISTRY PYTHON
PKG[codex]=@openai/codex;              VER[codex]=0.171.0;   BIN[codex]=codex
PKG[claude]=@anthropic-ai/claude-code; VER[claude]=2.1.332;  BIN[claude]=claude
PKG[gemini]=@google/gemini-cli;        VER[gemini]=0.61.0;   BIN[gemini]=gemini
PKG[opencode]=opencode-ai;             VER[opencode]=1.18.33; BIN[opencode]=opencode
PKG[qwen]=@qwen-code/qwen-code;        VER[qwen]=0.24.4;     BIN[qwen]=qwen
PKG[copilot]=@github/copilot;          VER[copilot]=1.0.102; BIN[copilot]=copilot
PKG[grok]=@vibe-kit/grok-cli;          VER[grok]=0.0.34;     BIN[grok]=grok
# droid: the registry has @factory/cli at 0.225.1 and its linux-x64 binary
# package only at 0.225.2; amp: the newest @ampcode/cli whose linux-x64
# package the registry also has at the same version.
PKG[droid]=@factory/cli;               VER[droid]=0.225.1;   BIN[droid]=droid
EXTRA[droid]=@factory/cli-linux-x64@0.225.2
ALLOW[droid]=@factory/cli
PKG[qoder]=@qoder-ai/qodercli;         VER[qoder]=1.1.52;    BIN[qoder]=qodercli
PKG[hermes]=hermes-agent;               VER[hermes]=0.19.0;   BIN[hermes]=hermes
REGISTRY[hermes]=pypi
# kimi: kimi-cli 1.51.0 and 1.52.0 are stubs of the archived CLI (every
# argument prints a deprecation notice; none runs an installer fetched from
# the internet), so 1.50.0, the last working release. It needs Python 3.12 or
# later, and failed on 3.12.1 (TypeError: super(type, obj) at import): 3.13
# (see find_python below).
PKG[kimi]=kimi-cli;                     VER[kimi]=1.50.0;     BIN[kimi]=kimi
REGISTRY[kimi]=pypi
PYTHON[kimi]=3.13
# omp: 18.3.4's @oh-my-pi/omp-stats@18.3.4 is not on the registry; 18.2.3
# installs. Its bin is a Bun script (engines: bun >=1.3.14): Bun from the
# npm registry beside it, whose install script links its native binary.
PKG[omp]=@oh-my-pi/pi-coding-agent;     VER[omp]=18.2.3;      BIN[omp]=omp
EXTRA[omp]=bun@1.4.5
ALLOW[omp]=bun
# pi: a node script (omp's package has its name under another scope). PI_OFFLINE keeps it from downloading fd and
# ripgrep and from its version check at startup.
PKG[pi]=@mariozechner/pi-coding-agent;  VER[pi]=0.73.1;       BIN[pi]=pi
ENVS[pi]="PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1"
# deepseek: Reasonix; its `reasonix` is a node launcher of the native binary
# in the optional package for the platform, pinned beside it.
PKG[deepseek]=reasonix;                 VER[deepseek]=1.38.11;  BIN[deepseek]=reasonix
EXTRA[deepseek]=@reasonix/cli-linux-x64@1.38.11
PKG[amp]=@ampcode/cli;                 VER[amp]=0.0.1790142911-g7618fb; BIN[amp]=amp
ALLOW[amp]=@ampcode/cli

# Extra environment, space separated KEY=VALUE.
ENVS[claude]="DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"
ENVS[copilot]="COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false"
ENVS[opencode]="OPENCODE_DISABLE_AUTOUPDATE=1"

# Further commands, after `--version` and `--help`. "|" separates commands;
# each is the argument list, split on spaces.
# SUBS: always run. OPTS: "word:args" runs args only when the top-level help
# lists `word` as a command (or as an alias of one), so a renamed or dropped
# subcommand shows up as a missing entry rather than an error.
SUBS[codex]="resume --help|exec --help|exec resume --help|login --help"
OPTS[codex]="update:update --help"
OPTS[claude]="auth:auth --help|auth:auth login --help|login:login --help|update:update --help|install:install --help"
OPTS[gemini]="auth:auth --help|login:login --help"
SUBS[opencode]="run --help"
OPTS[opencode]="auth:auth --help|session:session --help|serve:serve --help|upgrade:upgrade --help"
OPTS[qwen]="auth:auth --help|login:login --help"
OPTS[copilot]="login:login --help|update:update --help|sessions:sessions --help|help:help environment|help:help permissions"
OPTS[grok]="auth:auth --help|login:login --help"
SUBS[droid]="exec --help|resume --help"
OPTS[droid]="update:update --help|login:login --help"
OPTS[qoder]="login:login --help|update:update --help"
SUBS[deepseek]="run --help"
OPTS[deepseek]="upgrade:upgrade --help"
SUBS[amp]="threads --help|threads continue --help|last --help"
OPTS[amp]="login:login --help|update:update --help"
ENVS[kimi]="KIMI_CLI_NO_AUTO_UPDATE=1"
SUBS[kimi]="login --help"
OPTS[hermes]="login:login --help|update:update --help|sessions:sessions --help|chat:chat --help"

export CALLER_HOME="$HOME"
NODE_DIR="$(dirname "$(command -v node)")"
mkdir -p "$CACHE_DIR"
CACHE_DIR="$(cd "$CACHE_DIR" && pwd)"

WORK="$(mktemp -d)"
scratch=""
trap 'rm -rf "$WORK" ${scratch:+"$scratch"}' EXIT

# ---------------------------------------------------------------- helpers
cat >"$WORK/run.py" <<'PY'
"""Run one command isolated; append its record to a JSON-lines file.

argv: RECORDS HOME TIMEOUT ENVJSON -- CMD ARGS...
The recorded args omit the executable itself. Raw output is kept here;
sanitising happens when the runtime's file is written.
"""
import json, os, signal, subprocess, sys, tempfile, time

records, home, timeout, envjson = sys.argv[1:5]
assert sys.argv[5] == "--"
cmd = sys.argv[6:]
env = json.loads(envjson)
timeout = float(timeout)


def scratch_pids():
    """Pids (other than ours) whose environment holds HOME=<scratch home>."""
    want = ("HOME=" + home).encode()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if want in f.read().split(b"\0"):
                    found.append(int(d))
        except OSError:
            pass
    return found


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def kill_leftovers(pgid):
    names = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        for pid in scratch_pids():
            n = comm(pid)
            if n and sig == signal.SIGTERM:
                names.append(n)
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(1.0 if sig == signal.SIGTERM else 0.2)
    return sorted(set(names))


with tempfile.TemporaryFile() as out:
    proc = subprocess.Popen(
        ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + cmd,
        stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        cwd=home, start_new_session=True)
    rec = {"args": cmd[1:]}
    try:
        rec["exit_code"] = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        rec["exit_code"] = 124
        rec["timed_out"] = True
    # still running group members, and anything that escaped the group
    alive_in_group = False
    try:
        os.killpg(proc.pid, 0)
        alive_in_group = True
    except (ProcessLookupError, PermissionError):
        pass
    left = kill_leftovers(proc.pid) if (alive_in_group or scratch_pids()) else []
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    if left:
        rec["leftover_processes"] = left
    out.seek(0)
    rec["output"] = out.read().decode("utf-8", "replace")

with open(records, "a") as f:
    f.write(json.dumps(rec) + "\n")
sys.stdout.write(rec["output"])
PY

cat >"$WORK/write.py" <<'PY'
"""Assemble <runtime>.json from the records, stripping ANSI and paths.

argv: OUT META_JSON RECORDS(or '') CACHE HOME
The invoking user's home (env CALLER_HOME) is written as `$HOME`.
"""
import json, os, re, sys

out, meta, records, cache, home = sys.argv[1:6]
doc = json.loads(meta)

ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"      # OSC ... BEL/ST
    r"|\x1b[P^_X][^\x1b]*\x1b\\"              # DCS/PM/APC/SOS ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"               # CSI
    r"|\x1b[ -/]*[0-~]"                       # other escapes
    r"|\x9b[0-?]*[ -/]*[@-~]")


def clean(text):
    text = ANSI.sub("", text)
    text = text.replace("\r\n", "\n")
    pairs = []
    caller = os.environ.get("CALLER_HOME", "")
    for path, tag in ((cache, "<cache>"), (home, "<home>"), (caller, "$HOME")):
        if path and path != "/":
            pairs.append((path, tag))
            real = os.path.realpath(path)
            if real != path:
                pairs.append((real, tag))
    for path, tag in sorted(pairs, key=lambda p: -len(p[0])):
        text = text.replace(path, tag)
    return text


cmds = []
if records and os.path.exists(records):
    with open(records) as f:
        for line in f:
            rec = json.loads(line)
            rec["output"] = clean(rec["output"])
            # keep a stable key order: args, exit_code, [timed_out], ..., output
            output = rec.pop("output")
            rec["output"] = output
            cmds.append(rec)

if cmds:
    ver = next((c for c in cmds if c["args"] == ["--version"]), None)
    if ver is not None:
        text = ver["output"].strip()
        lines = [l.strip() for l in text.splitlines() if l.strip()]
        if len(lines) > 1:
            # Other lines are warnings; keep the line with a version number.
            hit = [l for l in lines if re.search(r"\d+\.\d+\.\d+", l)]
            text = hit[0] if hit else text
        doc["version"] = text
    doc["commands"] = cmds
    if all(c["exit_code"] != 0 for c in cmds):
        doc["error"] = "no command exited 0; see commands[].output"

for k in ("error", "resolved"):
    if doc.get(k):
        doc[k] = clean(doc[k])

with open(out, "w") as f:
    json.dump(doc, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY

find_python() {  # minor version (3.13) -> an interpreter of it, or nothing
  # PANEHOST_PYTHON_<3_13>, else pythonX.Y on PATH when it runs (a pyenv shim
  # of a version that is not selected does not), else pyenv's own copy.
  local want="$1" var="PANEHOST_PYTHON_${1//./_}" candidate
  for candidate in "${!var:-}" "$(command -v "python$want" || true)" \
      "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/"python$want"; do
    if [[ -n "$candidate" && -x "$candidate" ]] &&
        [[ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "$want" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

meta_json() {  # runtime package pinned_version executable sha256 resolved [error]
  EXTRA_PKGS="${EXTRA[$1]:-}" ALLOW_PKGS="${ALLOW[$1]:-}" REG="${REGISTRY[$1]:-npm}" PY_VERSION="${PYTHON[$1]:-}" python3 - "$@" <<'PY'
import json, os, sys
rt, pkg, pinned, exe, sha, resolved = sys.argv[1:7]
doc = {"runtime": rt, "package": pkg, "pinned_version": pinned,
       "version": None, "executable": exe, "resolved": resolved or None,
       "sha256": sha or None, "captured_on": os.environ["CAPTURED_ON"]}
if os.environ.get("REG") == "pypi":
    doc["package"] = None
    doc["pypi_package"] = pkg
    if os.environ.get("PY_VERSION"):
        doc["python"] = os.environ["PY_VERSION"]
if os.environ.get("EXTRA_PKGS"):
    doc["extra_packages"] = os.environ["EXTRA_PKGS"].split()
if os.environ.get("ALLOW_PKGS"):
    doc["allow_scripts"] = os.environ["ALLOW_PKGS"].split()
if len(sys.argv) > 7:
    doc["error"] = sys.argv[7]
print(json.dumps(doc))
PY
}

extras_installed() {  # prefix "pkg@ver ..." -> 0 when every one is there
  local spec
  for spec in $2; do
    [[ "$(installed_version "$1" "${spec%@*}")" == "${spec##*@}" ]] || return 1
  done
}

allow_scripts() {  # prefix "pkg ..." -> allowScripts in the prefix's package.json
  python3 - "$1/package.json" $2 <<'PY'
import json, os, sys
path, names = sys.argv[1], sys.argv[2:]
doc = json.load(open(path)) if os.path.exists(path) else {}
doc.setdefault("allowScripts", {}).update({n: True for n in names})
json.dump(doc, open(path, "w"))
PY
}

installed_version() {  # prefix package -> version or empty
  local pj="$1/node_modules/$2/package.json"
  [[ -f "$pj" ]] && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$pj" || true
}

lists_subcommand() {  # helpfile word -> 0 if the help lists it as a command
  # Command lines are indented by at most 4 spaces: "  word  description",
  # "  word [..]", "  word|alias", or "  cli word ..." (yargs style);
  # deeper-indented lines are wrapped descriptions. An alias counts too:
  # "[aliases: word]".
  grep -Eq "^ {1,4}([A-Za-z0-9_-]+ +)?$2([[:space:]]|\||,|\[|<|\$)" "$1" ||
    grep -Eq "aliases: ([^]]*[ ,])?$2[],]" "$1"
}

# ---------------------------------------------------------------- main
only="${CAPTURE_ONLY:-}"
for rt in "${RUNTIMES[@]}"; do
  if [[ -n "$only" && " $only " != *" $rt "* ]]; then continue; fi
  pkg="${PKG[$rt]}" ver="${VER[$rt]}" bin="${BIN[$rt]}"
  prefix="$CACHE_DIR/$rt"
  out="$EVIDENCE_DIR/$rt.json"
  echo "== $rt ($pkg@$ver)" >&2

  if [[ "${REGISTRY[$rt]:-npm}" == pypi ]]; then
    python=/usr/bin/python3
    if [[ -n "${PYTHON[$rt]:-}" ]] && ! python="$(find_python "${PYTHON[$rt]}")"; then
      err="no Python ${PYTHON[$rt]} found (PANEHOST_PYTHON_${PYTHON[$rt]//./_}, python${PYTHON[$rt]} on PATH, or pyenv's versions/${PYTHON[$rt]}.*)"
      python3 "$WORK/write.py" "$out" "$(meta_json "$rt" "$pkg" "$ver" "$bin" "" "" "$err")" "" "$CACHE_DIR" ""
      echo "   $err; recorded error" >&2
      continue
    fi
    minor='import sys; print("%d.%d" % sys.version_info[:2])'
    # Made again when the pin or the interpreter's version changed.
    if [[ "$("$prefix/bin/pip" show "$pkg" 2>/dev/null | sed -n 's/^Version: //p')" != "$ver" ]] ||
        [[ "$("$prefix/bin/python3" -c "$minor" 2>/dev/null || true)" != "$("$python" -c "$minor")" ]]; then
      rm -rf "$prefix"
      if ! { "$python" -m venv "$prefix" && "$prefix/bin/pip" install --disable-pip-version-check -q "$pkg==$ver"; } \
            >"$WORK/install.log" 2>&1; then
        err="python${PYTHON[$rt]:-3} -m venv <cache>/$rt && <cache>/$rt/bin/pip install $pkg==$ver failed: $(tail -n 15 "$WORK/install.log")"
        python3 "$WORK/write.py" "$out" "$(meta_json "$rt" "$pkg" "$ver" "$bin" "" "" "$err")" "" "$CACHE_DIR" ""
        echo "   install failed; recorded error" >&2
        continue
      fi
    fi
    bindir="$prefix/bin"
  else
    extra="${EXTRA[$rt]:-}"
    if [[ "$(installed_version "$prefix" "$pkg")" != "$ver" ]] || ! extras_installed "$prefix" "$extra"; then
      mkdir -p "$prefix"
      if [[ -n "${ALLOW[$rt]:-}" ]]; then allow_scripts "$prefix" "${ALLOW[$rt]}"; fi
      # shellcheck disable=SC2086
      if ! DISABLE_AUTOUPDATER=1 npm install --prefix "$prefix" --no-fund --no-audit \
            "$pkg@$ver" $extra >"$WORK/install.log" 2>&1; then
        err="npm install --prefix <cache>/$rt --no-fund --no-audit $pkg@$ver${extra:+ $extra} failed: $(tail -n 15 "$WORK/install.log")"
        python3 "$WORK/write.py" "$out" "$(meta_json "$rt" "$pkg" "$ver" "$bin" "" "" "$err")" "" "$CACHE_DIR" ""
        echo "   install failed; recorded error" >&2
        continue
      fi
    fi
    bindir="$prefix/node_modules/.bin"
  fi

  link="$bindir/$bin"
  if [[ ! -e "$link" ]]; then
    err="installed $pkg@$ver but ${bindir#"$prefix/"}/$bin does not exist"
    python3 "$WORK/write.py" "$out" "$(meta_json "$rt" "$pkg" "$ver" "$bin" "" "" "$err")" "" "$CACHE_DIR" ""
    continue
  fi
  target="$(readlink -f "$link")"
  sha="$(sha256sum "$target" | cut -d' ' -f1)"

  scratch="$(mktemp -d)"
  records="$WORK/$rt.jsonl"
  : >"$records"
  env_json="$(python3 - "$NODE_DIR:$bindir" "$scratch" ${ENVS[$rt]:-} <<'PY'
import json, sys
env = {"PATH": sys.argv[1], "HOME": sys.argv[2], "LANG": "C.UTF-8", "TERM": "dumb"}
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    env[k] = v
print(json.dumps(env))
PY
)"
  run() { python3 "$WORK/run.py" "$records" "$scratch" "$TIMEOUT" "$env_json" -- "$bin" "$@"; }

  run --version >/dev/null || true
  run --help >"$WORK/help.txt" || true

  cmds=()
  if [[ -n "${SUBS[$rt]:-}" ]]; then IFS='|' read -r -a cmds <<<"${SUBS[$rt]}"; fi
  if [[ -n "${OPTS[$rt]:-}" ]]; then
    IFS='|' read -r -a opts <<<"${OPTS[$rt]}"
    for o in "${opts[@]}"; do
      if lists_subcommand "$WORK/help.txt" "${o%%:*}"; then cmds+=("${o#*:}"); fi
    done
  fi
  for c in "${cmds[@]}"; do
    read -r -a words <<<"$c"
    run "${words[@]}" >/dev/null || true
  done

  meta="$(meta_json "$rt" "$pkg" "$ver" "$bin" "$sha" "$target")"
  python3 "$WORK/write.py" "$out" "$meta" "$records" "$CACHE_DIR" "$scratch"
  rm -rf "$scratch"
  scratch=""
  echo "   wrote $(basename "$out")" >&2
done
