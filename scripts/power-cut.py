#!/usr/bin/python3
"""Power cuts on a real device: the power-loss workload of
crates/fieldstore/tests/power_loss.rs runs on a real ext4 or XFS file system, every block write
and cache flush the kernel sends to the disk is logged, and the states a power cut could leave
on the disk are rebuilt from the log, mounted (the kernel replays its journal) and checked with
the same invariants as the simulated states.

dm-log-writes and dm-flakey would log the writes at the device mapper; kernels without it (as
on the machine this was written on: no /dev/mapper/control, no modules) still have loop devices
and FUSE, so the log is taken one layer lower: the file system lives on a loop device whose
backing file this script serves over FUSE (`serve`). The loop driver sends each write to the
backing file and each cache flush (REQ_PREFLUSH, and FUA, which loop turns into a flush) as an
fsync of it, so the daemon sees them in the order the kernel completes them.

Crash states, at each point just before a device flush or just after a step of the workload
returned: every write completed before the last flush is on the disk; of the writes since,
any subset, each kept whole, lost, or torn into a random subset of its 4 KiB sectors.

  power-cut.py --test-binary PATH [--fs ext4|xfs] [--commit MODE]... [--states N] [--seed N]
               [--keep DIR] [--json]

scripts/power-cut.sh builds the test binary, installs what is missing and calls this as root.
"""
import argparse
import contextlib
import errno
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time

# A torn write keeps a random subset of its 4 KiB sectors: the physical sector of today's disks
# and the block size of both file systems. (Tearing at 512 bytes breaks XFS's own log recovery,
# which trusts a 4 KiB metadata block to be written whole; `--sector 512` shows it.)
SECTOR = 4096
# Sizes that hold the workload with room to spare; XFS will not make a smaller file system.
IMAGE_BYTES = {"ext4": 128 << 20, "xfs": 320 << 20}
MKFS = {"ext4": ["mkfs.ext4", "-q", "-F", "-b", "4096"], "xfs": ["mkfs.xfs", "-q", "-f"]}
# The kernel writes dirty pages back after this long (centiseconds) while the workload runs, so
# unsynced data also reaches the disk at unplanned moments, as it does on a busy machine.
EAGER_WRITEBACK = {"/proc/sys/vm/dirty_expire_centisecs": "1", "/proc/sys/vm/dirty_writeback_centisecs": "1"}
# What to restore if another run left the eager values in place: the kernel's defaults.
KERNEL_DEFAULTS = {"/proc/sys/vm/dirty_expire_centisecs": "3000", "/proc/sys/vm/dirty_writeback_centisecs": "500"}


def serve(image, log_dir, mountpoint):
    """The logging disk: `/disk` is the image, `/ops` takes the workload's `mark` lines."""
    try:
        import fusepy as fuse  # Debian's python3-fusepy
    except ImportError:
        import fuse

    class Disk(fuse.Operations):
        def __init__(self):
            self.image = os.open(image, os.O_RDWR)
            self.size = os.fstat(self.image).st_size
            self.records = open(os.path.join(log_dir, "records"), "w")
            self.blobs = open(os.path.join(log_dir, "blobs"), "wb")
            self.blob_end = 0

        def getattr(self, path, fh=None):
            if path == "/":
                return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
            if path in ("/disk", "/ops"):
                size = self.size if path == "/disk" else 0
                return dict(st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=size)
            raise fuse.FuseOSError(errno.ENOENT)

        def readdir(self, path, fh):
            return [".", "..", "disk", "ops"]

        def open(self, path, flags):
            return 0

        def truncate(self, path, length, fh=None):
            return 0

        def read(self, path, size, offset, fh):
            return os.pread(self.image, size, offset) if path == "/disk" else b""

        def write(self, path, data, offset, fh):
            if path == "/disk":
                os.pwrite(self.image, data, offset)
                self.blobs.write(data)
                self.records.write(f"w {offset} {len(data)} {self.blob_end}\n")
                self.blob_end += len(data)
            else:
                for line in data.decode().splitlines():
                    if line.startswith("mark\t"):
                        self.records.write(f"mark {int(line.split()[1])}\n")
            return len(data)

        def fsync(self, path, datasync, fh):
            if path == "/disk":
                self.records.write("flush\n")
            return 0

        def destroy(self, path):
            self.records.close()
            self.blobs.close()

    fuse.FUSE(Disk(), mountpoint, foreground=True, nothreads=True, direct_io=True)


def run(*command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout.strip()


@contextlib.contextmanager
def mounted(image_or_device, fs_type, directory):
    """Mounts an image through a loop device; unmounts and detaches on leaving."""
    device = run("losetup", "-f", "--show", image_or_device)
    try:
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["mount", "-t", fs_type, device, directory], check=True, capture_output=True, text=True)
        try:
            yield directory
        finally:
            run("umount", directory)
    finally:
        run("losetup", "-d", device)


@contextlib.contextmanager
def eager_writeback():
    saved = {path: open(path).read().strip() for path in EAGER_WRITEBACK}
    saved = {path: KERNEL_DEFAULTS[path] if value == EAGER_WRITEBACK[path] else value for path, value in saved.items()}
    try:
        for path, value in EAGER_WRITEBACK.items():
            open(path, "w").write(value)
        yield
    finally:
        for path, value in saved.items():
            open(path, "w").write(value)


def record(args, work, commit):
    """Runs the workload on a logging disk; returns the log's records and its blob file."""
    base, disk, log_dir, fuse_dir = (os.path.join(work, n) for n in ("base.img", "disk.img", "log", "fuse"))
    for d in (log_dir, fuse_dir):
        os.makedirs(d)
    with open(base, "wb") as f:
        f.truncate(IMAGE_BYTES[args.fs])
    run(*MKFS[args.fs], base)
    shutil.copyfile(base, disk)
    daemon = subprocess.Popen([sys.executable, __file__, "serve", disk, log_dir, fuse_dir])
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(fuse_dir, "disk")):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("power-cut: the FUSE disk did not appear (is /dev/fuse usable?)")
        with eager_writeback(), mounted(os.path.join(fuse_dir, "disk"), args.fs, os.path.join(work, "fs")) as fs:
            child(args, f"power-loss:{commit}:{fs}/root:{fuse_dir}", "child_power_loss_workload", check=True)
    finally:
        subprocess.run(["fusermount", "-u", fuse_dir], check=False)
        daemon.wait(timeout=30)
    records = []
    for line in open(os.path.join(log_dir, "records")):
        kind, *numbers = line.split()
        records.append((kind, *map(int, numbers)))
    return base, records, os.path.join(log_dir, "blobs")


def child(args, spec, test, check):
    environment = dict(os.environ, FIELDSTORE_TEST_CHILD=spec)
    command = [args.test_binary, test, "--exact", "--nocapture", "--test-threads=1", "--quiet"]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise SystemExit(f"power-cut: {test} failed:\n{done.stdout}{done.stderr}")
    return done


def points(records):
    """Crash points: just before each flush, just after each mark, and at the end."""
    for i, record in enumerate(records):
        if record[0] == "flush":
            yield i
        elif record[0] == "mark":
            yield i + 1
    yield len(records)


def pending_choice(count, rng, keep):
    """For each pending write: 'all', 'none' or a sorted tuple of kept sector numbers."""
    if keep in ("all", "none"):
        return (keep,) * count
    choice = []
    for _ in range(count):
        r = rng.random()
        choice.append("torn" if r < 0.1 else "all" if r < 0.1 + keep * 0.9 else "none")
    return tuple(choice)


def apply_write(image, blobs, record, sectors=None, sector=SECTOR):
    _, offset, length, blob = record
    data = os.pread(blobs, length, blob)
    if sectors is None:
        os.pwrite(image, data, offset)
        return
    for s in sectors:
        os.pwrite(image, data[s * sector:(s + 1) * sector], offset + s * sector)


def explore(args, work, commit, rng):
    base, records, blob_path = record(args, work, commit)
    blobs = os.open(blob_path, os.O_RDONLY)
    durable_path = os.path.join(work, "durable.img")
    shutil.copyfile(base, durable_path)
    durable = os.open(durable_path, os.O_RDWR)
    all_points = list(points(records))
    # Each point's two extremes first, then random subsets, up to the budget.
    plan = [(p, keep) for p in all_points for keep in ("none", "all")]
    if len(plan) > args.states:
        plan = sorted(rng.sample(plan, args.states))
    while len(plan) < args.states:
        plan.append((rng.choice(all_points), rng.choice([0.2, 0.5, 0.8])))
    plan.sort(key=lambda item: item[0])
    applied, last_flush, seen, failures, checked = 0, 0, set(), [], 0
    for point, keep in plan:
        # Everything before the last flush ahead of the point is on the disk for good.
        last_flush = max([i for i in range(last_flush, point) if records[i][0] == "flush"], default=last_flush)
        while applied < last_flush:
            if records[applied][0] == "w":
                apply_write(durable, blobs, records[applied])
            applied += 1
        pending = [r for r in records[last_flush:point] if r[0] == "w"]
        done = sum(1 for r in records[:point] if r[0] == "mark")
        seed = rng.getrandbits(32)
        choice = pending_choice(len(pending), random.Random(seed), keep)
        if (last_flush, choice, done) in seen:
            continue
        seen.add((last_flush, choice, done))
        state = os.path.join(work, "state.img")
        os.fsync(durable)
        run("cp", "--sparse=always", durable_path, state)
        image = os.open(state, os.O_RDWR)
        sector_rng = random.Random(seed)
        for r, c in zip(pending, choice):
            if c == "all":
                apply_write(image, blobs, r)
            elif c == "torn":
                count = -(-r[2] // args.sector)
                kept = sorted(sector_rng.sample(range(count), sector_rng.randint(0, count)))
                apply_write(image, blobs, r, kept, args.sector)
        os.close(image)
        what = f"{args.fs}, {commit}: crash before record {point} of {len(records)} ({done} steps done, {len(pending)} writes pending, keep {keep}, seed {seed:#x})"
        error = check(args, work, commit, state, done)
        checked += 1
        if error:
            failures.append(f"{what}: {error}")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copyfile(state, os.path.join(args.keep, f"{args.fs}-{commit}-{point}-{seed:x}.img"))
    counts = {kind: sum(1 for r in records if r[0] == kind) for kind in ("w", "flush", "mark")}
    return {
        "fs": args.fs,
        "commit": commit,
        "writes": counts["w"],
        "flushes": counts["flush"],
        "steps": counts["mark"],
        "points": len(all_points),
        "states": checked,
        "failures": failures,
    }


def check(args, work, commit, state, done):
    """Mounts a crash state and checks it; returns what is wrong, or None."""
    try:
        with mounted(state, args.fs, os.path.join(work, "state")) as fs:
            result = child(args, f"power-cut-check:{commit}:{done}:{fs}/root", "child_power_cut_check", check=False)
    except subprocess.CalledProcessError as e:
        return f"{e.cmd[0]} failed: {e.stderr.strip()}"
    if result.returncode != 0:
        lines = [l for l in (result.stdout + result.stderr).splitlines() if l.strip()]
        panic = [l for l in lines if "panicked" in l]
        at = lines.index(panic[0]) if panic else max(len(lines) - 3, 0)
        return " ".join(lines[at:at + 2])
    return None


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "serve":
        return serve(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--test-binary", required=True, help="the power_loss test binary (cargo test --no-run)")
    parser.add_argument("--fs", choices=sorted(MKFS), default="ext4")
    parser.add_argument("--commit", action="append", choices=["embedded", "ordered"], help="commit modes (default both)")
    parser.add_argument("--states", type=int, default=100, help="crash states checked per commit mode (default 100)")
    parser.add_argument("--sector", type=int, default=SECTOR, help=f"bytes a torn write keeps or loses together (default {SECTOR})")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random choices (default 1)")
    parser.add_argument("--keep", help="directory that keeps the image of each failing state")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/dev/loop-control") or not os.path.exists("/dev/fuse"):
        raise SystemExit("power-cut: needs root, loop devices (/dev/loop-control) and FUSE (/dev/fuse)")
    rng = random.Random(args.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="fieldstore-power-cut.") as work:
        for commit in args.commit or ["embedded", "ordered"]:
            directory = os.path.join(work, commit)
            os.makedirs(directory)
            results.append(explore(args, directory, commit, rng))
    if args.json:
        print(json.dumps(results, indent=2))
    for r in results:
        if not args.json:
            print(
                f"{r['fs']}, {r['commit']}: {r['writes']:,} device writes, {r['flushes']:,} flushes, {r['steps']} steps;"
                f" {r['states']:,} crash states at {r['points']:,} points checked, {len(r['failures'])} failed"
            )
        for failure in r["failures"][:8]:
            print(failure, file=sys.stderr)
    return 1 if any(r["failures"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
