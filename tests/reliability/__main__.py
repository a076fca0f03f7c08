"""``python3 -m tests.reliability [--quick|--long] [--seed N] [--only NAME[,NAME...]] [--list]``."""

import argparse
import os
import sys
import threading
import time
import traceback
from typing import List, Optional

# The scenario modules register their scenarios when imported.
from . import (  # noqa: F401
    churn,
    client_fuzz,
    death,
    drain,
    fuzz_http,
    fuzz_stdio,
    load,
    oauth_fuzz,
    parsers,
    processes,
    restart,
    resume,
    sessions,
    soak,
    streams,
)
from .harness import SCENARIOS, Result, Run, Scenario

#: The order scenarios run in: the fuzzers first (the cheapest way to find a crash), then faults, load,
#: abandoned state, churn, and the two that take longest.
RUN_ORDER = ("stdio-fuzz", "http-fuzz", "client-fuzz-stdio", "client-fuzz-http", "oauth-fuzz", "parser-fuzz",
             "sse-resume", "many-streams", "http-load",
             "stdio-load", "idle-sessions", "abandoned-streams", "sigterm-drain", "peer-death", "server-restart",
             "cancel-stdio", "cancel-http", "soak", "spawn-close", "slow-client")


def ordered() -> List[Scenario]:
    """Every registered scenario, in `RUN_ORDER` (any not named there last, so none is forgotten)."""
    rank = {name: index for index, name in enumerate(RUN_ORDER)}
    return sorted(SCENARIOS, key=lambda entry: rank.get(entry.name, len(rank)))


def run_one(entry: Scenario, long: bool, seed: int) -> Result:
    """Run one scenario on a thread of its own under its hard time limit; a hang or an exception is a
    problem, and the processes of a hung scenario are killed."""
    run = Run(long, seed)
    outcome: List[Result] = []

    def target() -> None:
        try:
            outcome.append(entry.run(run))
        except BaseException:  # a crash of the scenario (or of what it drives) is a failure, with its trace
            outcome.append(Result(problems=["crashed:\n" + traceback.format_exc()]))

    limit = entry.long_timeout if long else entry.quick_timeout
    thread = threading.Thread(target=target, name=f"scenario-{entry.name}", daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive() or not outcome:
        killed = run.kill_all()
        return Result(problems=[f"hang: not finished within its limit of {limit:g} s (killed pids {killed})"])
    result = outcome[0]
    left = run.kill_all()
    result.check(not left, f"processes still running after the scenario: {left}")
    return result


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.reliability", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the bounded mode CI runs (the default)")
    mode.add_argument("--long", action="store_true", help="the issue's figures; takes a good while")
    parser.add_argument("--seed", type=int, default=1, help="the seed of every scenario's input (default 1)")
    parser.add_argument("--only", metavar="NAME[,NAME...]", help="run only these scenarios")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args(argv)
    if args.list:
        for entry in ordered():
            print(f"{entry.name:18} quick limit {entry.quick_timeout:g} s, long limit {entry.long_timeout:g} s")
        return 0
    chosen = ordered()
    if args.only:
        names = [name.strip() for name in args.only.split(",")]
        unknown = sorted(set(names) - {entry.name for entry in SCENARIOS})
        if unknown:
            parser.error(f"no scenario named {', '.join(unknown)} (see --list)")
        chosen = [entry for entry in chosen if entry.name in names]
    mode_name = "long" if args.long else "quick"
    print(f"reliability suite: {mode_name} mode, seed {args.seed}, {len(chosen)} scenarios, pid {os.getpid()}",
          flush=True)
    failed = []
    started = time.monotonic()
    for entry in chosen:
        began = time.monotonic()
        result = run_one(entry, args.long, args.seed)
        figures = " ".join(f"{key}={value}" for key, value in result.figures.items())
        verdict = "FAIL" if result.problems else "ok"
        print(f"{entry.name:18} {verdict:4} {figures} time={time.monotonic() - began:.1f}s", flush=True)
        for problem in result.problems:
            print(f"    problem: {problem}", flush=True)
        if result.problems:
            failed.append(entry.name)
            print(f"    reproduce: python3 -m tests.reliability --{mode_name} --seed {args.seed} --only {entry.name}",
                  flush=True)
    total = time.monotonic() - started
    print(f"reliability suite: {len(chosen) - len(failed)} passed, {len(failed)} failed"
          f"{' (' + ', '.join(failed) + ')' if failed else ''} in {total:.1f}s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # A hung scenario's thread may still hold locks the interpreter's exit would wait for: leave at once.
    os._exit(code)
