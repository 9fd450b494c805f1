#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The opt-in benchmarks' reports on made-up results: tests/testbed/bench_dlcp_report.py
takes every variant bench-dlcp runs (de, spray, prio, bound, scaled, exact, gloo) and a
failed run, on two paths with switch-sized queues, computes each variant's throughput against its own loss-free runs and shows
the drop-eligible share of the runs that marked packets."""
import json
import os
import subprocess
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(here, "..", "testbed", "bench_dlcp_report.py")
VARIANTS = ("de", "spray", "prio", "bound", "scaled", "exact", "gloo")
PY = "/usr/bin/python3"


def run(v, loss, rep, step):
    nr = None
    if v != "gloo":
        nr = {"tolerant_calls": 0 if v == "exact" else 139, "short_slots": 10 * loss,
              "short_denied": loss, "left_out": [loss] * 4, "qp_errors": 0, "qp_error": "",
              "de_thresh": 0.5 if v == "de" else 0,
              "drop_eligible": {"tolerant": 1000, "received": 250 if v == "de" else 0,
                                "short": 3 if v == "de" else 0}}
    return {"summary": True, "variant": v, "rep": rep, "loss": loss, "ppm": 150000,
            "run_s": 60, "median_step_s": step, "time_to_acc_s": 20 + loss,
            "final_test_acc": 0.92, "ranks": 4, "torch": "1.13", "rate_mbit": 100,
            "steps": 70, "target_acc": 0.9, "prio_bands": True, "paths": 2, "path_b_mbit": 40,
            "queue_kb": 64, "queue_drops": 7 * loss + rep, "netreduce": nr}


class DlcpReport(unittest.TestCase):
    def setUp(self):
        if subprocess.run([PY, "-c", "import matplotlib"], capture_output=True).returncode:
            self.skipTest(f"{PY} has no matplotlib (apt-get install python3-matplotlib)")

    def test_every_variant(self):
        runs = [run(v, loss, rep, 0.4 * (1 + loss / 10))
                for rep in (1, 2) for loss in (0, 1) for v in VARIANTS]
        runs.append({"summary": True, "failed": True, "variant": "spray", "rep": 3, "loss": 1,
                     "exit_codes": "0,124,0,0", "run_s": 1800})
        with tempfile.TemporaryDirectory() as d:
            res = os.path.join(d, "r.jsonl")
            with open(res, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in runs)
            # as bench-dlcp runs it: Debian's python, with matplotlib
            out = subprocess.run([PY, REPORT, "--out", d, res], text=True, capture_output=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(os.path.join(d, "bench-dlcp.md")) as f:
                md = f.read()
            for name in ("bench-dlcp.csv", "bench-dlcp.png"):
                self.assertTrue(os.path.getsize(os.path.join(d, name)) > 0, name)
        for v in VARIANTS:
            self.assertIn(f"| 1 | {v} |", md)
        # throughput against the variant's own loss-free runs: 0.4 / 0.44
        self.assertIn("| 1 | de | 2 | 0.440 | 0.91 |", md)
        self.assertIn("| 1 | spray | 3 (1 failed) |", md)
        self.assertIn("250 of 1000 (25.0%), 3 short", md)
        self.assertIn("de: prio, small packets drop-eligible (NR_DE_THRESH)", md)
        self.assertIn("two paths, B at 40 Mbit/s", md)
        self.assertIn("every queue 64 KiB (tail drop)", md)
        # a run's queue drops, the column before its run time
        self.assertRegex(md, r"\| 2 \| 1 \| gloo \|.*\| - \| 9 \| 60 \|")


if __name__ == "__main__":
    unittest.main(verbosity=2)
