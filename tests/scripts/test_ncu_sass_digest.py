"""scripts/ncu_sass_digest.py on a hand-written CSV in the shape of ncu's --page source --csv
output (two kernels, made-up counts), against shares worked out by hand. Run:
python3 -m unittest discover tests/scripts"""
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "ncu_sass_digest.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import ncu_sass_digest as digest  # noqa: E402

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
          '"stall_wait","stall_mio","stall_wait (Not Issued)"\n')
# Kernel A: a loop of 3 instructions run 100 times (300 of 320 instructions, 75 of 100 samples),
# then 2 instructions run 10 times. Its stalls: wait 60, mio 40; 30 of the mio at the HGMMA.
KERNEL_A = [
    '"0x10","UIADD3 UR4, UR4, 0x1, URZ","20","100","20","0","5"\n',
    '"0x20","HGMMA.64x24x8.F32.TF32 R24, gdesc[UR8], R24","35","100","5","30","0"\n',
    '"0x30","@P0 BRA 0x10","20","100","20","0","0"\n',
    '"0x40","STG.E [R2], R5","15","10","10","5","0"\n',
    '"0x50","EXIT","10","10","5","5","0"\n',
]
KERNEL_B = ['"0x10","FFMA R1, R2, R3, R4","1","1,000","1","0","0"\n']


def write_csv(text):
    handle = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    handle.write(text)
    handle.close()
    return handle.name


class NcuSassDigest(unittest.TestCase):
    def setUp(self):
        text = ('"Kernel Name","void a(int)",\n' + HEADER + "".join(KERNEL_A) +
                '"Kernel Name","void b(float)",\n' + HEADER + "".join(KERNEL_B))
        self.path = write_csv(text)

    def tearDown(self):
        os.unlink(self.path)

    def test_regions_are_runs_of_equal_counts_with_their_shares(self):
        found = list(digest.sections(self.path))
        self.assertEqual([name for name, _, _ in found], ["void a(int)", "void b(float)"])
        out = io.StringIO()
        name, header, rows = found[0]
        digest.digest(name, header, rows, 12, out)
        lines = out.getvalue().splitlines()
        self.assertIn("320 instructions executed, 100 stall samples", lines[1])
        self.assertIn("100 x    3 instr =  93.8 %", lines[2])  # 300 / 320
        self.assertIn("samples  75.0 %", lines[2])
        self.assertIn("10 x    2 instr =   6.2 %", lines[3])
        self.assertIn("stalls: wait 60.0 %, mio 40.0 %", out.getvalue())
        self.assertIn("at HGMMA: 35.0 % of the stalls (mio 30.0 %, wait 5.0 %", out.getvalue())

    def test_thousands_separators_are_read(self):
        out = io.StringIO()
        name, header, rows = list(digest.sections(self.path))[1]
        digest.digest(name, header, rows, 12, out)
        self.assertIn("1,000 instructions executed", out.getvalue())

    def test_a_file_that_is_not_ncu_output_is_refused_by_name(self):
        for text in ("not,a,profile\n1,2,3\n", '"Kernel Name","void a(int)",\n"Address","Source"\n"0x10","EXIT"\n'):
            path = write_csv(text)
            try:
                result = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(path, result.stderr)
                self.assertNotIn("Traceback", result.stderr)
            finally:
                os.unlink(path)


if __name__ == "__main__":
    unittest.main()
