#!/usr/bin/env python3
"""Side by side, on the same fixtures (benches/peers/fixture.py, depth x
skills): lisa-context in process and as a whole process, Gemini CLI's own
loader in process (benches/peers/gemini.mjs) and Codex CLI's whole process
(`codex debug prompt-input`, offline: its model provider points at a closed
local port). Whole processes are timed from fork to exit (median of N) and
their peak memory read from GNU time -v (median). Run on demand, not in CI:

    python3 benches/peers/run.py            # installs the peers on first use
    PEERS_N=30 python3 benches/peers/run.py

The peers are installed with npm into ~/.cache/lisa-context-peers (outside
the repository), at the versions below. Prints a Markdown table.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.expanduser("~/.cache/lisa-context-peers")
GEMINI = "@google/gemini-cli-core@0.61.0"
CODEX = "@openai/codex@0.171.0"
SHAPES = [(3, 20), (12, 200), (30, 1000)]
N = int(os.environ.get("PEERS_N", "15"))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def install_peers():
    if os.path.exists(os.path.join(CACHE, "node_modules/.bin/codex")) and os.path.exists(
        os.path.join(CACHE, "node_modules/@google/gemini-cli-core")
    ):
        return
    os.makedirs(CACHE, exist_ok=True)
    sh(["npm", "install", "--no-audit", "--no-fund", GEMINI, CODEX], cwd=CACHE,
       stdout=subprocess.DEVNULL)


def wall_ms(cmd, env=None, cwd=None, n=N):
    times = []
    for _ in range(n):
        t = time.perf_counter_ns()
        subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter_ns() - t) / 1e6)
    return statistics.median(times)


def peak_kib(cmd, env=None, cwd=None, n=5):
    peaks = []
    for _ in range(n):
        out = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, cwd=cwd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, check=True).stderr
        for line in out.splitlines():
            if "Maximum resident set size" in line:
                peaks.append(int(line.split(":")[-1]))
    return statistics.median(peaks)


def main():
    if not os.path.exists("/usr/bin/time"):
        sys.exit("GNU time (/usr/bin/time) is needed: apt-get install time")
    install_peers()
    sh(["cargo", "build", "--release", "--locked", "-q", "--bin", "lisa-context",
        "--example", "perf_time"], cwd=REPO)
    ours = os.path.join(REPO, "target/release/lisa-context")
    ours_in = os.path.join(REPO, "target/release/examples/perf_time")
    codex = os.path.join(CACHE, "node_modules/.bin/codex")
    rows = []
    for depth, skills in SHAPES:
        base = tempfile.mkdtemp(prefix=f"peers-{depth}x{skills}-")
        try:
            cwd = subprocess.run([sys.executable, os.path.join(HERE, "fixture.py"), base,
                                  str(depth), str(skills)], check=True, text=True,
                                 capture_output=True).stdout.strip()
            home = os.path.join(base, "home")
            repo = os.path.join(base, "repo")
            # Each tool finds the user's file where it looks for it.
            os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
            shutil.copy(os.path.join(home, "AGENTS.md"), os.path.join(home, ".gemini/AGENTS.md"))
            codex_home = os.path.join(base, "codex-home")
            os.makedirs(codex_home, exist_ok=True)
            shutil.copy(os.path.join(home, "AGENTS.md"), os.path.join(codex_home, "AGENTS.md"))
            env = dict(os.environ, HOME=home, CODEX_HOME=codex_home)

            lisa_cmd = [ours, "--home", home, "snapshot", "--cwd", cwd, "--format", "json"]
            subprocess.run(lisa_cmd, stdout=subprocess.DEVNULL, check=True)  # nonce key
            lisa_in = float(subprocess.run([ours_in, home, cwd, str(max(N, 20))], check=True,
                                           text=True, capture_output=True).stdout)
            lisa_proc = wall_ms(lisa_cmd)
            lisa_rss = peak_kib(lisa_cmd)

            gem = subprocess.run(["node", os.path.join(HERE, "gemini.mjs"), cwd, repo, str(N)],
                                 cwd=CACHE, env=env, check=True, text=True,
                                 capture_output=True).stdout.strip().splitlines()[-1]
            gem_in = float(gem.split()[0])

            codex_cmd = [codex, "debug", "prompt-input", "-c", "model_provider=closed",
                         "-c", 'model_providers.closed={name="closed",'
                               'base_url="http://127.0.0.1:9/v1",wire_api="responses"}',
                         "-c", "model=gpt-5"]
            codex_proc = wall_ms(codex_cmd, env=env, cwd=cwd, n=max(5, N // 3))
            codex_rss = peak_kib(codex_cmd, env=env, cwd=cwd, n=3)
            rows.append((depth, skills, lisa_in, lisa_proc, lisa_rss, gem_in, gem, codex_proc,
                         codex_rss))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    print(f"peers: {GEMINI}, {CODEX}; node {subprocess.run(['node', '--version'], text=True, capture_output=True).stdout.strip()}; medians, N={N}")
    print()
    print("| depth × skills | lisa-context in process | lisa-context process (peak RSS) "
          "| Gemini CLI loader in process | Codex `debug prompt-input` process (peak RSS) |")
    print("|---|---|---|---|---|")
    for d, s, li, lp, lr, gi, graw, cp, cr in rows:
        print(f"| {d} × {s} | {li:.2f} ms | {lp:.1f} ms ({lr / 1024:.1f} MiB) "
              f"| {gi:.1f} ms | {cp:.0f} ms ({cr / 1024:.1f} MiB) |")
    print()
    for d, s, *_, graw, _, _ in rows:
        print(f"gemini {d}x{s}: {graw}", file=sys.stderr)


if __name__ == "__main__":
    main()
