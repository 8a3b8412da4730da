#!/usr/bin/env python3
"""Where a kernel's instructions and stalls go, from the per-SASS-instruction CSV that
scripts/device.sh writes with NCU_SASS=1 (logs/ncu-VARIANT-sass.csv).

Consecutive instructions executed the same number of times are one region (a loop body, an
epilogue, a header); the regions are listed by their share of the executed instructions, with
their share of the stall samples and their commonest opcodes; then the stall reasons over the
whole kernel and at the tensor-core and barrier instructions.

    python3 scripts/ncu_sass_digest.py ncu-gpu-tensor-tf32-sass.csv [--kernel N] [--regions 12]

The CSV holds one section per profiled launch ("Kernel Name" lines); --kernel picks one (0-based).
"""
import argparse
import csv
import sys


def sections(path):
    """The CSV's sections: (kernel name, header, rows)."""
    with open(path, newline="") as f:
        lines = f.readlines()
    starts = [i for i, line in enumerate(lines) if line.startswith('"Kernel Name"')]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        name = next(csv.reader([lines[start]]))[1]
        reader = csv.reader(lines[start + 1:end])
        header = next(reader)
        yield name, header, [row for row in reader if len(row) == len(header)]


def opcode(source):
    words = source.split()
    if not words:
        return "?"
    word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return word.split(".")[0]


REQUIRED = ("Instructions Executed", "Warp Stall Sampling (All Samples)", "Source", "Address")


def digest(name, header, rows, regions, out):
    missing = [column for column in REQUIRED if column not in header]
    if missing:
        raise ValueError(f"kernel {name!r} has no column {missing[0]!r} (not ncu's --page source --csv output?)")
    executed = header.index("Instructions Executed")
    samples = header.index("Warp Stall Sampling (All Samples)")
    source = header.index("Source")
    address = header.index("Address")
    stall_columns = [i for i, h in enumerate(header) if h.startswith("stall_") and "Not Issued" not in h]

    def number(text):
        try:
            return float(text.replace(",", "")) if text else 0.0
        except ValueError:
            return 0.0

    total = sum(number(r[executed]) for r in rows) or 1.0
    total_samples = sum(number(r[samples]) for r in rows) or 1.0
    groups = []
    for r in rows:
        count = number(r[executed])
        if groups and groups[-1]["count"] == count:
            groups[-1]["ops"].append(opcode(r[source]))
            groups[-1]["samples"] += number(r[samples])
        else:
            groups.append({"address": r[address], "count": count, "ops": [opcode(r[source])],
                           "samples": number(r[samples])})
    groups.sort(key=lambda g: -g["count"] * len(g["ops"]))
    print(f"{name}\n  {total:,.0f} instructions executed, {total_samples:,.0f} stall samples", file=out)
    for g in groups[:regions]:
        tally = {}
        for op in g["ops"]:
            tally[op] = tally.get(op, 0) + 1
        common = ", ".join(f"{op} {n}" for op, n in sorted(tally.items(), key=lambda x: -x[1])[:7])
        share = 100 * g["count"] * len(g["ops"]) / total
        print(f"  {g['address']}  {g['count']:>12,.0f} x {len(g['ops']):4d} instr = {share:5.1f} %"
              f"  samples {100 * g['samples'] / total_samples:5.1f} %  [{common}]", file=out)

    stalls = {header[i][6:]: sum(number(r[i]) for r in rows) for i in stall_columns}
    all_stalls = sum(stalls.values()) or 1.0
    top = sorted(stalls.items(), key=lambda x: -x[1])[:8]
    print("  stalls: " + ", ".join(f"{k} {100 * v / all_stalls:.1f} %" for k, v in top), file=out)
    for op in ("HGMMA", "HMMA", "WARPGROUP", "BAR"):
        picked = [r for r in rows if opcode(r[source]) == op]
        if not picked:
            continue
        at = {header[i][6:]: sum(number(r[i]) for r in picked) for i in stall_columns}
        share = 100 * sum(at.values()) / all_stalls
        if share < 0.5:
            continue
        top = sorted(at.items(), key=lambda x: -x[1])[:3]
        print(f"    at {op}: {share:.1f} % of the stalls (" +
              ", ".join(f"{k} {100 * v / all_stalls:.1f} %" for k, v in top) + ")", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--kernel", type=int, action="append", help="section to digest (default: all)")
    parser.add_argument("--regions", type=int, default=12)
    args = parser.parse_args()
    try:
        found = list(sections(args.csv))
        if not found:
            raise ValueError('no "Kernel Name" line: not a CSV of ncu --page source --csv')
        for n, (name, header, rows) in enumerate(found):
            if args.kernel is None or n in args.kernel:
                digest(name, header, rows, args.regions, sys.stdout)
                print()
    except (OSError, ValueError, UnicodeDecodeError, csv.Error, StopIteration) as error:
        sys.exit(f"ncu_sass_digest: {args.csv}: {error}")


if __name__ == "__main__":
    main()
