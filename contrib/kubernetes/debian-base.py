#!/usr/bin/python3
"""Write the Debian 12 base of the msp-mcp image as a tar, from this host's installed packages.

    debian-base.py OUT.tar PACKAGE...

The root filesystem holds every file dpkg lists for the named packages and for what they
depend on (Pre-Depends and Depends, the first installed alternative of each), taken from
this host, which must be Debian 12: the image then carries exactly the libraries msp and
msp-mcp were built and tested against, and building it needs no network and no registry
(debootstrap and `FROM debian:12` both download). Added: the merged-/usr links and empty /tmp,
/run, /var/tmp, /var/cache, /proc, /sys, /dev (accounts: build-image.sh).
"""
import os
import re
import subprocess
import sys
import tarfile


def die(msg):
    sys.stderr.write("debian-base: %s\n" % msg)
    sys.exit(1)


def query(pkg, fmt):
    r = subprocess.run(["dpkg-query", "-W", "-f", fmt, pkg], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def installed(pkg):
    return query(pkg, "${db:Status-Abbrev}").startswith("ii")


def closure(names):
    todo, seen = list(names), set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        if not installed(p):
            die("package %s is not installed on this host" % p)
        seen.add(p)
        for alt in query(p, "${Pre-Depends}, ${Depends}").split(","):
            for a in alt.split("|"):
                n = re.sub(r"\(.*?\)|:[a-z0-9-]+", "", a).strip()
                if n and installed(n):
                    todo.append(n)
                    break
    return sorted(seen)


def paths(pkgs):
    # A listed path's directory part through this host's links (merged /usr: /bin/sh is
    # /usr/bin/sh), so that no file lands below a link the image makes itself.
    out = set()
    for p in pkgs:
        listed = subprocess.run(["dpkg-query", "-L", p], capture_output=True, text=True)
        for line in listed.stdout.split("\n"):
            if not line.startswith("/") or line == "/.":
                continue
            if not os.path.lexists(line):
                continue
            d = os.path.realpath(os.path.dirname(line))
            out.add(os.path.join(d, os.path.basename(line)))
    return sorted(out)


def add_dir(tar, name, mode=0o755):
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, mode
    tar.addfile(info)


def add_link(tar, name, target):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    tar.addfile(info)


def main():
    if len(sys.argv) < 3:
        die("usage: debian-base.py OUT.tar PACKAGE...")
    try:
        with open("/etc/os-release") as f:
            osr = f.read()
    except OSError as e:
        die("cannot read /etc/os-release: %s" % e)
    if not re.search(r'^ID=debian$', osr, re.M) or not re.search(r'^VERSION_ID="12"$', osr, re.M):
        die("this host is not Debian 12: the base is made from its installed packages")
    pkgs = closure(sys.argv[2:])
    with tarfile.open(sys.argv[1], "w") as tar:
        for d in ("usr", "usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "run", "var",
                  "var/cache", "proc", "sys", "dev"):
            add_dir(tar, d)
        for d in ("tmp", "var/tmp"):
            add_dir(tar, d, 0o1777)
        for link in ("bin", "sbin", "lib", "lib64"):
            add_link(tar, link, "usr/" + link)
        for p in paths(pkgs):
            rel = p.lstrip("/")
            if rel.split("/")[0] in ("bin", "sbin", "lib", "lib64", "tmp", "proc", "sys", "dev"):
                continue
            tar.add(p, arcname=rel, recursive=False)
    print("debian-base: %s: %d packages: %s" % (sys.argv[1], len(pkgs), " ".join(pkgs)))


main()
