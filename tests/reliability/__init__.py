"""mcplite's reliability suite: fuzzers, a chaos proxy, load, churn and soak, against real server processes.

Run it with ``python3 -m tests.reliability [--quick|--long] [--seed N] [--only NAME]`` from the checkout's
root. Quick mode (the default, run by CI) takes two to three minutes; long mode reaches the figures of issue
15 (1,000,000 fuzzed stdio frames, 100,000 fuzzed HTTP requests, 100 stream drops, 1,000 calls at once over
HTTP, 1,000 spawn/close cycles, 50,000 soak calls).
Each scenario prints one line of figures; the run exits 1 on any loss, crash, hang or leak. The same seed
makes the same input, so a failure reproduces with the ``--only NAME --seed N`` the failure line prints.

Modules: `harness` (settings, results, server processes, /proc readings), `frames` (seeded hostile input),
`rawhttp` (HTTP by hand over raw sockets), `chaos` (the fault-injecting TCP proxy), `server` (the fixture
server the scenarios run), `hostile_peer` (a stdio server that answers with hostile output), and the
scenarios: `fuzz_stdio`, `fuzz_http`, `client_fuzz`, `oauth_fuzz`, `resume`, `load`, `sessions`, `drain`, `death`,
`restart`, `churn`, `soak` (with the slow client) and `processes`. pytest does not collect this package
(``tests/test_reliability.py`` checks its parts cheaply).
"""
