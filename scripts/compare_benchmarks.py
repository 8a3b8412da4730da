#!/usr/bin/env python3
"""Two benchmark JSON files (convscope-cli bench --json) side by side: each (variant, batch) both
measured, its conv op-time sum (medians) before and after, their ratio, and the end-to-end time,
as a Markdown table. Results are data: the table is made from the files, never typed.

    scripts/compare_benchmarks.py BEFORE.json AFTER.json
"""
import json
import sys


def sums(path):
    with open(path) as f:
        report = json.load(f)
    runs = {}
    for run in report["runs"]:
        end_to_end = run.get("end_to_end_s")
        runs[(run["variant"], run["batch"])] = (
            sum(layer["op_time_s"]["median"] for layer in run["layers"]) * 1e3,
            end_to_end["median"] * 1e3 if isinstance(end_to_end, dict) else 0.0,
        )
    return report.get("device", "?"), runs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    (before_device, before), (after_device, after) = sums(sys.argv[1]), sums(sys.argv[2])
    print(f"before: {before_device} ({sys.argv[1]}); after: {after_device} ({sys.argv[2]})\n")
    print("| variant | batch | conv sum before (ms) | conv sum after (ms) | after / before | end to end before → after (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for key in sorted(after):
        if key in before:
            (b, be), (a, ae) = before[key], after[key]
            print(f"| {key[0]} | {key[1]:,} | {b:.3f} | {a:.3f} | {a / b:.3f} | {be:.3f} → {ae:.3f} |")


if __name__ == "__main__":
    main()
