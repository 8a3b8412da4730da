"""scripts/end_to_end_table.py against figures worked out by hand from the hand-written fixtures
(tests/scripts/fixtures/, made-up numbers). Run: python3 -m unittest discover tests/scripts"""
import copy
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import end_to_end_table as e2e  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")
BENCH_PATH = os.path.join(FIXTURES, "end-to-end-bench.json")
REF_PATH = os.path.join(FIXTURES, "end-to-end-pytorch.json")

# course-high's conv layers per image, in floats: conv1 reads 1x48x48 = 2,304 and writes
# 12x42x42 = 21,168; conv2 reads 12x21x21 = 5,292 and writes 24x15x15 = 5,400; weights once:
# 12x1x7x7 = 588 and 24x12x7x7 = 14,112.
FLOATS_PER_IMAGE = 2304 + 21168 + 5292 + 5400  # 34,164
WEIGHT_FLOATS = 588 + 14112                    # 14,700


def table_rows(text):
    """{first cell: [other cells]} of the Markdown table in text."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


class EndToEndTable(unittest.TestCase):
    def setUp(self):
        self.bench = e2e.load(BENCH_PATH)
        self.ref = e2e.load(REF_PATH)

    def test_conv_bytes_by_hand(self):
        problems = e2e.conv_layer_shapes(self.bench, BENCH_PATH)
        self.assertEqual(e2e.conv_bytes(problems, 10000), 4 * (10000 * FLOATS_PER_IMAGE + WEIGHT_FLOATS))
        self.assertEqual(e2e.conv_bytes(problems, 10000), 1_366_618_800)  # the "1.37 GB"
        self.assertEqual(e2e.conv_bytes(problems, 1), 4 * (FLOATS_PER_IMAGE + WEIGHT_FLOATS))

    def test_whole_network_run_does_not_hide_a_layer(self):
        # Put the one-stage whole-network run first: the shapes still come from a two-layer run.
        bench = copy.deepcopy(self.bench)
        bench["runs"].sort(key=lambda r: len(r["layers"]))
        self.assertEqual(len(bench["runs"][0]["layers"]), 1)
        self.assertEqual(len(e2e.conv_layer_shapes(bench, BENCH_PATH)), 2)

    def test_floors_by_hand(self):
        problems = e2e.conv_layer_shapes(self.bench, BENCH_PATH)
        floors = e2e.floors_ms(problems, self.ref, 10000)
        # 10,000 x 784 bytes at 50 GB/s; 1,366,618,800 bytes at 2,000 GB/s.
        self.assertAlmostEqual(floors["upload"], 7_840_000 / 50e9 * 1e3, places=12)
        self.assertAlmostEqual(floors["upload"], 0.1568, places=9)
        self.assertAlmostEqual(floors["conv_bytes"], 0.6833094, places=9)
        self.assertEqual(floors["floor"], floors["conv_bytes"])
        # Without the pinned figure only the conv-bytes floor is known, and it is the floor.
        ref = dict(self.ref, pinned_h2d_gbytes_per_s="failed: made up")
        floors = e2e.floors_ms(problems, ref, 1)
        self.assertIsNone(floors["upload"])
        self.assertAlmostEqual(floors["floor"], 4 * 48864 / 2000e9 * 1e3, places=15)

    def test_best_variant(self):
        self.assertEqual(e2e.best_convscope(self.bench, 1), ("fast-small", 0.05))
        self.assertEqual(e2e.best_convscope(self.bench, 100), ("fast-large", 0.1))
        # old-file's 0 is "not measured", not the fastest.
        self.assertEqual(e2e.best_convscope(self.bench, 10000), ("fast-large", 2.0))
        self.assertIsNone(e2e.best_convscope(self.bench, 7))

    def test_table_cells(self):
        rows = table_rows(e2e.table(self.bench, self.ref))
        header = next(k for k in rows if k == "")
        self.assertEqual(rows[header], ["batch 1", "batch 100", "batch 10,000"])  # 500: no peer
        self.assertEqual(rows["ConvScope end to end, best variant"],
                         ["0.050 (fast-small)", "0.100 (fast-large)", "2.000 (fast-large)"])
        self.assertEqual(rows["PyTorch compiled + CUDA graph, FP32 (TF32 off)"], ["0.080", "0.160", "6.200"])
        self.assertEqual(rows["PyTorch compiled + CUDA graph, TF32"], ["0.100", "-", "5.100"])
        self.assertEqual(rows["PyTorch compiled + CUDA graph, TF32, GPU time (CUDA events)"],
                         ["0.060", "-", "5.000"])
        self.assertEqual(rows["PyTorch eager, no graph (CUDA events)"], ["0.300", "0.400", "12.000"])
        # Host-clock peer over ConvScope's best: 0.08/0.05, 0.16/0.1, 6.2/2; 0.1/0.05, 5.1/2.
        self.assertEqual(rows["ConvScope's speed-up over FP32 (TF32 off)"], ["1.60x", "1.60x", "3.10x"])
        self.assertEqual(rows["ConvScope's speed-up over TF32"], ["2.00x", "-", "2.55x"])
        self.assertEqual(rows["floor: upload (bytes / pinned bandwidth)"], ["1.6e-05", "0.002", "0.157"])
        self.assertEqual(rows["floor: conv bytes / HBM bandwidth"], ["9.8e-05", "0.007", "0.683"])
        # 2.0 / 0.6833 = 2.93; 0.1 / (100 x 136,656 + 58,800 bytes at 2,000 GB/s = 0.006862 ms) = 14.6.
        self.assertEqual(rows["ConvScope best, x its floor"][1:], ["14.6x", "2.9x"])
        self.assertEqual(rows["TF32: max abs diff, predictions equal to eager FP32"],
                         ["1.0e-05, 1/1", "-", "8.0e-06, 9,990/10,000"])

    def test_failed_mode_is_named(self):
        text = e2e.table(self.bench, self.ref)
        self.assertIn("compiled_graph_tf32 at batch 100: failed: RuntimeError: made up", text)

    def test_other_device_is_refused(self):
        ref = dict(self.ref, device="Another GPU")
        with self.assertRaisesRegex(e2e.TableError, "bench.json.*pytorch.json.*Another GPU"):
            e2e.table(self.bench, ref)

    def test_no_shared_batch_is_refused(self):
        ref = dict(self.ref, batches=[3])
        with self.assertRaisesRegex(e2e.TableError, "share no batch size"):
            e2e.table(self.bench, ref)

    def test_unreadable_file_is_named(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write("{not json")
        try:
            with self.assertRaisesRegex(e2e.TableError, f.name):
                e2e.load(f.name)
            stderr = io.StringIO()
            with redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
                e2e.main(["end_to_end_table.py", BENCH_PATH, f.name])
            self.assertIn(f.name, str(exit_.exception.code))
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()


class DocumentedTable(unittest.TestCase):
    """docs/performance.md's end-to-end table is what its committed result files give: no figure
    typed by hand, none left behind when the files change."""
    ROOT = os.path.join(HERE, "..", "..")
    DOC = os.path.join(ROOT, "docs", "performance.md")

    def test_the_documented_table_is_made_from_its_files(self):
        with open(self.DOC) as f:
            text = f.read()
        self.assertIn("<!-- end-to-end-table: ", text)
        self.assertEqual(e2e.updated(text, self.ROOT), text)

    def test_a_figure_typed_over_the_table_is_found(self):
        with open(self.DOC) as f:
            text = f.read()
        start = text.index("<!-- end-to-end-table: ")
        row = text.index("| ConvScope end to end, best variant |", start)
        cell = text.index("(", row)  # the first cell's figure ends before its variant's name
        edited = text[:cell - 2] + "9 " + text[cell:]
        self.assertNotEqual(e2e.updated(edited, self.ROOT), edited)

    def test_a_file_without_a_block_is_refused(self):
        with self.assertRaises(e2e.TableError):
            e2e.updated("no table here\n", self.ROOT)

