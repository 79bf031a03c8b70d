#!/usr/bin/env python3
"""Write an OCI image layout from a JSON spec, with any tar entries a test needs (including
ones no image builder would write: "../x", a file below a symlink, device nodes).

    oci-layout.py OUT_DIR < SPEC.json     prints {"manifest": DIGEST, "layers": [DIGEST...]}

SPEC: {"tag": "latest", "config": {"Env": [...], "WorkingDir": "/w"},
       "layers": [{"compression": "gzip" | "zstd" | "none",
                   "entries": [{"path": "bin/sh", "symlink": "busybox"},
                               {"path": "bin/busybox", "file": "/bin/busybox", "mode": 493},
                               {"path": "etc/motd", "data": "text", "uid": 0, "gid": 0},
                               {"path": "d", "dir": true}, {"path": "h", "hardlink": "etc/motd"},
                               {"path": "dev/x", "chr": [1, 3]}, {"path": "big", "size": 65536},
                               {"path": "holes", "data": "end", "sparse": 1099511627776}]}]}
"sparse": a PAX sparse file (GNU 0.1) of that many bytes whose data is only at its end.
"""
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile


def tar_layer(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for e in entries:
            ti = tarfile.TarInfo(e["path"])
            ti.uid, ti.gid = e.get("uid", 0), e.get("gid", 0)
            ti.mtime = 1700000000
            data = None
            if e.get("dir"):
                ti.type, ti.mode = tarfile.DIRTYPE, e.get("mode", 0o755)
            elif "symlink" in e:
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, e["symlink"], 0o777
            elif "hardlink" in e:
                ti.type, ti.linkname, ti.mode = tarfile.LNKTYPE, e["hardlink"], 0o644
            elif "chr" in e:
                ti.type, ti.mode = tarfile.CHRTYPE, 0o666
                ti.devmajor, ti.devminor = e["chr"]
            else:
                if "file" in e:
                    with open(e["file"], "rb") as f:
                        data = f.read()
                elif "size" in e:
                    data = b"\0" * e["size"]
                else:
                    data = e.get("data", "").encode()
                ti.size, ti.mode = len(data), e.get("mode", 0o644)
                if "sparse" in e:
                    ti.pax_headers = {"GNU.sparse.size": str(e["sparse"]),
                                      "GNU.sparse.numblocks": "1",
                                      "GNU.sparse.map": f"{e['sparse'] - len(data)},{len(data)}"}
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def compress(raw, how):
    if how == "gzip":
        return gzip.compress(raw, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
    if how == "zstd":
        out = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE, check=True)
        return out.stdout, "application/vnd.oci.image.layer.v1.tar+zstd"
    return raw, "application/vnd.oci.image.layer.v1.tar"


def put_blob(out, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return "sha256:" + d, len(data)


def main():
    out = sys.argv[1]
    spec = json.load(sys.stdin)
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    layers, diff_ids = [], []
    for layer in spec["layers"]:
        raw = tar_layer(layer["entries"])
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        data, mt = compress(raw, layer.get("compression", "gzip"))
        digest, size = put_blob(out, data)
        layers.append({"mediaType": mt, "digest": digest, "size": size})
    config = {"architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine,
                                                                          os.uname().machine),
              "os": "linux", "config": spec.get("config", {}),
              "rootfs": {"type": "layers", "diff_ids": diff_ids},
              "history": [{"created_by": "oci-layout.py"} for _ in diff_ids]}
    cdigest, csize = put_blob(out, json.dumps(config).encode())
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": cdigest, "size": csize},
                "layers": layers}
    mdigest, msize = put_blob(out, json.dumps(manifest).encode())
    desc = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mdigest,
            "size": msize}
    if spec.get("tag"):
        desc["annotations"] = {"org.opencontainers.image.ref.name": spec["tag"]}
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [desc]}, f)
    json.dump({"manifest": mdigest, "layers": [l["digest"] for l in layers]}, sys.stdout)


main()
