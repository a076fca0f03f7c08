"""mcplite's reliability suite: fuzzers, a chaos proxy, load, churn and soak, against real server processes.

Run it with ``python3 -m tests.reliability [--quick|--long] [--seed N] [--only NAME]`` from the checkout's
root. Quick mode (the default, run by CI) takes a minute or two; long mode reaches the figures of issue 15
(1,000,000 fuzzed stdio frames, 100,000 fuzzed HTTP requests, 100 stream drops, 50,000 soak calls...).
Each scenario prints one line of figures; the run exits 1 on any loss, crash, hang or leak. The same seed
makes the same input, so a failure reproduces with the ``--only NAME --seed N`` the failure line prints.

Modules: `harness` (settings, results, server processes, /proc readings), `chaos` (the fault-injecting
TCP proxy), `server` (the fixture server every scenario runs), and one module per group of scenarios
(`fuzz_stdio`, `fuzz_http`, `resume`, `load`, `churn`, `soak`). pytest does not collect this package.
"""
