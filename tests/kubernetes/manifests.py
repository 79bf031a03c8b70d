#!/usr/bin/python3
"""Read contrib/kubernetes/*.yaml for tests/kubernetes/kubernetes.bats.

    manifests.py DIR check              every document parses and names apiVersion, kind, name
    manifests.py DIR get EXPR           print a value: EXPR is Python over `m`, the
                                        documents by kind (m["Deployment"] ...), and `c`,
                                        the Deployment's msp-mcp container
    manifests.py DIR podman-args PORT PROBE_PORT
                                        what `podman run` needs to grant what the
                                        Deployment grants, one argument a line, then the
                                        image and the container's args with --listen's
                                        port set to PORT and --probe-listen's to PROBE_PORT
                                        (the rest as the pod has them)
"""
import glob
import json
import os
import sys

import yaml


def load(d):
    m, docs = {}, []
    for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
        with open(f) as fh:
            for doc in yaml.safe_load_all(fh):
                if doc is None:
                    continue
                for k in ("apiVersion", "kind", "metadata"):
                    if k not in doc:
                        sys.exit("%s: a document without %s" % (f, k))
                if not doc["metadata"].get("name"):
                    sys.exit("%s: a %s without metadata.name" % (f, doc["kind"]))
                docs.append((f, doc))
                m.setdefault(doc["kind"], doc)
    return m, docs


def container(m):
    for c in m["Deployment"]["spec"]["template"]["spec"]["containers"]:
        if c["name"] == "msp-mcp":
            return c
    sys.exit("no container msp-mcp in the Deployment")


def podman_args(m, port, probe_port):
    pod = m["Deployment"]["spec"]["template"]["spec"]
    c = container(m)
    sc = c["securityContext"]
    out = ["--user", "%d:%d" % (sc["runAsUser"], sc["runAsGroup"])]
    if sc.get("privileged"):
        out.append("--privileged")
    for cap in sc.get("capabilities", {}).get("add", []):
        out += ["--cap-add", cap]
    if sc.get("seccompProfile", {}).get("type") == "Unconfined":
        out += ["--security-opt", "seccomp=unconfined"]
    if sc.get("appArmorProfile", {}).get("type") == "Unconfined":
        out += ["--security-opt", "apparmor=unconfined"]
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    vols = {v["name"]: v for v in pod["volumes"]}
    for vm in c["volumeMounts"]:
        v = vols[vm["name"]]
        if "emptyDir" in v:
            out += ["--tmpfs", vm["mountPath"]]
        elif "secret" in v:
            # The test's tokens file stands for the Secret: $TOKENS_DIR/<item path>.
            for it in v["secret"]["items"]:
                out += ["-v", "%s/%s:%s/%s:ro" % (os.environ["TOKENS_DIR"], it["path"],
                                                 vm["mountPath"], it["path"])]
    args = list(c["args"])
    for flag, p in (("--listen", port), ("--probe-listen", probe_port)):
        i = args.index(flag)
        args[i + 1] = "127.0.0.1:%s" % p
    return out + [c["image"]] + args


def main():
    d, what = sys.argv[1], sys.argv[2]
    m, docs = load(d)
    if what == "check":
        for f, doc in docs:
            print("%s: %s %s" % (os.path.basename(f), doc["kind"], doc["metadata"]["name"]))
    elif what == "get":
        v = eval(sys.argv[3], {"m": m, "c": container(m), "json": json})
        print(v if isinstance(v, str) else json.dumps(v))
    elif what == "podman-args":
        print("\n".join(podman_args(m, sys.argv[3], sys.argv[4])))
    else:
        sys.exit("unknown command " + what)


main()
