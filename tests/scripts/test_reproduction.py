#!/usr/bin/env python3
"""scripts/reproduction.py on a made-up results folder: each rule decides on the numbers it reads,
the verdicts follow level then direction, a claims file naming a column the table lacks is an
error, and --check fails on a stale page."""
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("reproduction", os.path.join(ROOT, "scripts", "reproduction.py"))
rep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rep)

CSV = """table,Dataset,Pop.,speedup,speedup (paper),time s,share
"Table 3 — times",Pol,64,10.0,20.0,1.0,0.2
"Table 3 — times",Elevators,64,30.0,25.0,2.0,0.5
"Table 3 — times",Fried,64,n/a,12,4.0,0.52
"Table 3 — times",Pol,128,9.0,1,8,0.53
table,Size,rate
"Fig 16 — rate",1000,"1,000"
"Fig 16 — rate",10000,5000
"Fig 16 — rate",100000,9000
"Fig 16 — rate",1000000,9100
"""


def level(**kw):
    c = {"csv": "fx", "table": "Table 3", "rows": "all", "where": {"Pop.": "64"}, "ours": "speedup"}
    c.update(kw)
    return c


class Rules(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(self.tmp.name, "fx.csv"), "w") as f:
            f.write(CSV)
        self.t = rep.Tables(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def status(self, c):
        return rep.check(self.t, c, "test")[0]

    def test_numbers(self):
        self.assertEqual(rep.number("1,000"), 1000.0)
        self.assertEqual(rep.number("7,5"), 7.5)
        self.assertEqual(rep.number("3.0*"), 3.0)
        self.assertIsNone(rep.number("n/a"))
        self.assertIsNone(rep.number("—"))

    def test_row_rules(self):
        # Pol 10 vs 20 (0.5), Elevators 30 vs 25 (1.2); Fried has no number; Pop. 128 is filtered out
        self.assertEqual(self.status(level(than="speedup (paper)", rule="ratio_in", band=[0.5, 2])), "holds")
        self.assertEqual(self.status(level(than="speedup (paper)", rule="ratio_in", band=[0.6, 2])), "fails")
        self.assertEqual(self.status(level(than="speedup (paper)", rule="ratio_in", band=[0.6, 2], fraction=0.5)), "holds")
        self.assertEqual(self.status(level(than=5, rule="greater")), "holds")
        self.assertEqual(self.status(level(than=5, rule="greater", factor=3)), "fails")
        self.assertEqual(self.status(level(than="time s", rule="greater", factor=9)), "holds")
        self.assertEqual(self.status(level(than=20, rule="less", rows=["Pol"])), "holds")
        self.assertEqual(self.status(level(than=20, rule="less", rows=["Fried"])), "none")
        # computed operands: time s / share is 5 and 4 at population 64
        self.assertEqual(self.status(level(ours={"ratio": ["time s", "share"]}, than=3.9, rule="greater")), "holds")
        self.assertEqual(self.status(level(ours={"ratio": ["time s", "share"]}, than=4.5, rule="greater")), "fails")
        # a share in percent: share / (time s + share + speedup (paper)) x 100 = 0.94 % and 1.82 %
        share = {"ratio": ["share", {"sum": ["time s", "share", "speedup (paper)"]}], "scale": 100}
        self.assertEqual(self.status(level(ours=share, than=2.0, rule="less", rows=["Pol", "Elevators"])), "holds")
        self.assertEqual(self.status(level(ours=share, than=1.0, rule="less", rows=["Pol", "Elevators"])), "fails")
        with self.assertRaisesRegex(rep.ClaimsError, "an operand is"):
            self.status(level(ours={"ratio": ["time s"]}, than=1, rule="greater"))

    def test_trends(self):
        fig = {"csv": "fx", "table": "Fig 16", "rows": "all", "ours": "rate"}
        self.assertEqual(self.status(dict(fig, rule="rises")), "holds")
        self.assertEqual(self.status(dict(fig, rule="falls")), "fails")
        self.assertEqual(self.status(dict(fig, rule="saturates", after="100000")), "holds")
        self.assertEqual(self.status(dict(fig, rule="saturates", after="10000")), "fails")
        self.assertEqual(self.status(dict(fig, rule="flat", rows=["100000", "1000000"])), "holds")
        self.assertEqual(self.status(level(rule="rises", ours="share", where={})), "holds")

    def test_errors_name_the_claim_and_key(self):
        with self.assertRaisesRegex(rep.ClaimsError, "no column 'speedp'"):
            rep.check(self.t, level(ours="speedp", than=1, rule="greater"), "x")
        with self.assertRaisesRegex(rep.ClaimsError, "no table titled 'Table 9"):
            rep.check(self.t, level(table="Table 9", than=1, rule="greater"), "x")
        with self.assertRaisesRegex(rep.ClaimsError, "unknown rule"):
            rep.check(self.t, level(rule="bigger"), "x")
        with self.assertRaisesRegex(rep.ClaimsError, "no table file"):
            rep.check(self.t, level(csv="nope", rule="rises"), "x")

    def test_explanation_values_come_from_the_tables(self):
        ex = {"text": "Pol {{pol}}x; all {{span}}; per set {{each}}; bare {{bare}}",
              "values": {"pol": level(rows=["Pol"], show="value"),
                         "span": level(ours={"ratio": ["time s", "share"]}, show="range"),
                         "each": level(ours="time s", show="list"),
                         "bare": level(ours="time s", rows=["Fried", "Pol"], show="values")}}
        self.assertEqual(rep.explanation_text(self.t, ex, "e"),
                         "Pol 10.0x; all 4.00-7.69; per set Pol 1.00, Elevators 2.00, Fried 4.00; bare 4.00, 1.00")
        # the text and its values must match; a value reads only columns and rows the table has
        with self.assertRaisesRegex(rep.ClaimsError, "uses gone without a value"):
            rep.explanation_text(self.t, {"text": "{{gone}}", "values": {}}, "e")
        with self.assertRaisesRegex(rep.ClaimsError, "values spare not used"):
            rep.explanation_text(self.t, {"text": "x", "values": {"spare": level(show="range")}}, "e")
        with self.assertRaisesRegex(rep.ClaimsError, "has no row Mv"):
            rep.explanation_text(self.t, {"text": "{{a}}", "values": {"a": level(rows=["Mv"])}}, "e")
        # a pending claim's tables may not have the row yet
        self.assertEqual(rep.explanation_text(self.t, {"text": "{{a}}", "values": {"a": level(rows=["Mv"])}}, "e", lenient=True),
                         "(no number)")
        with self.assertRaisesRegex(rep.ClaimsError, "needs one row"):
            rep.explanation_text(self.t, {"text": "{{a}}", "values": {"a": level(show="value")}}, "e")
        with self.assertRaisesRegex(rep.ClaimsError, "no column 'speedp'"):
            rep.explanation_text(self.t, {"text": "{{a}}", "values": {"a": level(ours="speedp", show="range")}}, "e")

    def test_percent_above_compares_two_values(self):
        # Elevators 30 over Pol 10: +200 %; Pol's time 1.0 over the median time 2.0: -50 %
        ex = {"text": "{{up}} % and {{down}} %",
              "values": {"up": {"percent_above": ["ele", "pol"]}, "down": {"percent_above": ["pt", "med"]},
                         "ele": level(rows=["Elevators"]), "pol": level(rows=["Pol"]),
                         "pt": level(rows=["Pol"], ours="time s"), "med": level(ours="time s", show="median")}}
        self.assertEqual(rep.explanation_text(self.t, ex, "e"), "200 % and -50 %")
        # the values it compares need not appear in the text, but must be one number each
        with self.assertRaisesRegex(rep.ClaimsError, "values of one number"):
            rep.explanation_text(self.t, {"text": "{{g}}", "values": {"g": {"percent_above": ["r", "r"]},
                                                                     "r": level(show="range")}}, "e")
        with self.assertRaisesRegex(rep.ClaimsError, "list of two value names"):
            rep.explanation_text(self.t, {"text": "{{g}}", "values": {"g": {"percent_above": ["r"]}}}, "e")
        self.assertEqual(rep.explanation_text(self.t, {"text": "{{g}}", "values": {
            "g": {"percent_above": ["a", "b"]}, "a": level(rows=["Mv"]), "b": level(rows=["Pol"])}}, "e", lenient=True),
            "(no number)")

    def test_counts_medians_and_lists_in_where(self):
        # a `where` list matches any of its values: Pop. 64 and 128 (Pol's two rows)
        both = {"Pop.": ["64", 128]}
        ex = {"text": "{{n}} above 5, {{m}} below 5; median {{med}}; {{pol}}",
              "values": {"n": level(where=both, ours="time s", show="count", above=5),
                         "m": level(where=both, ours="time s", show="count", below=5),
                         "med": level(where=both, ours="time s", show="median"),
                         "pol": level(where={"Dataset": ["Pol"], "Pop.": ["64", "128"]}, ours="time s", show="values")}}
        self.assertEqual(rep.explanation_text(self.t, ex, "e"), "1 of 4 above 5, 3 of 4 below 5; median 3.00; 1.00, 8.00")
        with self.assertRaisesRegex(rep.ClaimsError, "needs one of 'above' or 'below'"):
            rep.explanation_text(self.t, {"text": "{{a}}", "values": {"a": level(show="count")}}, "e")

    def test_verdicts(self):
        good = level(than="speedup (paper)", rule="ratio_in")
        bad = level(than=100, rule="ratio_in")
        up = level(than=1, rule="greater")
        down = level(than=1, rule="less")
        self.assertEqual(rep.verdict(self.t, {"level": good}, "v")[0], "reproduced")
        self.assertEqual(rep.verdict(self.t, {"level": bad, "direction": up}, "v")[0], "in direction, not level")
        self.assertEqual(rep.verdict(self.t, {"level": bad, "direction": down}, "v")[0], "contradicted")
        self.assertEqual(rep.verdict(self.t, {"level": bad}, "v")[0], "contradicted")
        self.assertEqual(rep.verdict(self.t, {"level": dict(good, rows=["Fried"])}, "v")[0], "not run here")
        self.assertEqual(rep.verdict(self.t, {"not_testable": "watts"}, "v")[0], "not testable here")
        self.assertEqual(rep.verdict(self.t, {"level": [good, dict(good, rows=["Fried"])]}, "v")[0], "reproduced")
        self.assertEqual(rep.verdict(self.t, {"level": [good, bad], "direction": up}, "v")[0], "in direction, not level")
        pending = {"level": level(ours="not yet a column", rule="rises"), "pending": "the faithful runs"}
        self.assertEqual(rep.verdict(self.t, pending, "v")[:2], ("not run here", ["pending: the faithful runs"]))

    def test_page_and_check(self):
        claims = os.path.join(self.tmp.name, "claims")
        os.makedirs(claims)
        with open(os.path.join(claims, "gmt_claims.json"), "w") as f:
            json.dump({"paper": "gmt", "citation": "Fixture 2022", "claims": [
                {"id": "gmt.a", "claim": "fast", "level": level(than="speedup (paper)", rule="ratio_in")},
                {"id": "gmt.b", "claim": "faster", "level": level(than=100, rule="ratio_in"),
                 "explanation": {"text": "host-bound", "evidence": "fx.md"}}]}, f)
        argv = ["--results", self.tmp.name, "--claims", claims]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            sys.argv = ["reproduction.py", *argv, "--check"]
            self.assertEqual(rep.main(), 1)  # no page yet
            sys.argv = ["reproduction.py", *argv]
            self.assertEqual(rep.main(), 0)
            sys.argv = ["reproduction.py", *argv, "--check"]
            self.assertEqual(rep.main(), 0)
        with open(os.path.join(self.tmp.name, "REPRODUCTION.md")) as f:
            page = f.read()
        self.assertIn("| gmt | 1 | 0 | 1 | 0 | 0 | 2 |", page)
        self.assertIn("- **gmt.b**: host-bound (evidence: fx.md)", page)
        with open(os.path.join(claims, "gmt_claims.json"), "w") as f:
            json.dump({"paper": "gmt", "claims": [{"id": "gmt.a", "claim": "x", "not_testable": "watts"}]}, f)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            sys.argv = ["reproduction.py", *argv, "--check"]
            self.assertEqual(rep.main(), 1)  # stale


if __name__ == "__main__":
    unittest.main()
