#!/usr/bin/python3
"""Compares two turbanet run files dataset by dataset and attribute by attribute, bitwise.

Used to show that a change of the code leaves results as they were: train the same config
before and after, then

    scripts/compare_runs.py before.h5 after.h5

Every dataset must exist in both files with the same shape, dtype and bytes (NaN equals NaN
when the bits agree), every attribute the same value. Attributes that describe the process
rather than the result (timings, creation time, threads, the kernel description) are
reported but not compared unless --strict. Exit 0 when equal, 1 with each difference listed.
"""
import argparse
import sys

import h5py
import numpy as np

# /meta attributes that change from one process to the next without changing a result.
# The command line too: a resumed run was made by another command than the uninterrupted one.
PROCESS_ATTRS = {"wall_seconds", "train_seconds", "created", "kernel", "threads", "version", "command"}


def items(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj))
    out["/"] = f
    return out


def same_bytes(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OSU":
        return a.tolist() == b.tolist()
    return a.tobytes() == b.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--strict", action="store_true", help="compare the process attributes too")
    ap.add_argument("--ignore", action="append", default=[], metavar="DATASET",
                    help="leave this dataset out (e.g. config, whose output.path names the file); repeatable")
    args = ap.parse_args()
    diffs, notes, compared = [], [], 0
    with h5py.File(args.a, "r") as fa, h5py.File(args.b, "r") as fb:
        ia, ib = items(fa), items(fb)
        for name in sorted(set(ia) | set(ib)):
            if name not in ia or name not in ib:
                diffs.append(f"{name}: only in {'the first' if name in ia else 'the second'} file")
                continue
            oa, ob = ia[name], ib[name]
            if isinstance(oa, h5py.Dataset) != isinstance(ob, h5py.Dataset):
                diffs.append(f"{name}: a dataset in one file, a group in the other")
                continue
            if isinstance(oa, h5py.Dataset) and name in args.ignore:
                notes.append(f"{name}: left out (--ignore)")
            elif isinstance(oa, h5py.Dataset):
                compared += 1
                if not same_bytes(oa[()], ob[()]):
                    diffs.append(f"{name}: values differ ({oa.shape} {oa.dtype} vs {ob.shape} {ob.dtype})")
            for key in sorted(set(oa.attrs) | set(ob.attrs)):
                if key not in oa.attrs or key not in ob.attrs:
                    if key in PROCESS_ATTRS and not args.strict:  # e.g. a command line recorded by one only
                        notes.append(f"{name}@{key}: only in one file (process attribute, not compared)")
                    else:
                        diffs.append(f"{name}@{key}: only in one file")
                    continue
                va, vb = oa.attrs[key], ob.attrs[key]
                if key in PROCESS_ATTRS and not args.strict:
                    if not same_bytes(va, vb):
                        notes.append(f"{name}@{key}: {va!r} -> {vb!r} (process attribute, not compared)")
                    continue
                if not same_bytes(va, vb):
                    diffs.append(f"{name}@{key}: {va!r} vs {vb!r}")
    for n in notes:
        print("note:", n)
    for d in diffs:
        print("DIFF:", d)
    print(f"{args.a} vs {args.b}: {compared} datasets compared, {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
