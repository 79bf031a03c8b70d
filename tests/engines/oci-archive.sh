#!/usr/bin/env bash
# Make an OCI image archive (image-layout tar) of one root filesystem, for
# `ctr image import` or any engine that loads OCI archives: no registry involved.
#
#   tests/engines/oci-archive.sh ROOTFS NAME OUT.tar [CMD...]
#
# One uncompressed layer (the tar of ROOTFS), a config with Env PATH and Cmd (default
# /bin/sh), a manifest, and index.json naming the manifest NAME (containerd reads the
# io.containerd.image.name annotation). Needs sha256sum and jq.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 ROOTFS NAME OUT.tar [CMD...]" >&2; exit 2; }
rootfs=$1 name=$2 out=$3
shift 3
[ $# -gt 0 ] || set -- /bin/sh

work=$(mktemp -d "${TMPDIR:-/tmp}/oci-archive.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

# blob FILE: move FILE into blobs/ under its digest; print "DIGEST SIZE".
blob() {
        local sum size
        sum=$(sha256sum "$1" | cut -d' ' -f1)
        size=$(stat -c %s "$1")
        mv "$1" "$work/blobs/sha256/$sum"
        echo "sha256:$sum $size"
}

tar -C "$rootfs" --numeric-owner -cf "$work/layer" .
read -r layer layer_size < <(blob "$work/layer")

jq -n --arg layer "$layer" --args '{
        architecture: "amd64", os: "linux",
        config: {Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                 Cmd: $ARGS.positional},
        rootfs: {type: "layers", diff_ids: [$layer]}}' "$@" >"$work/config"
read -r config config_size < <(blob "$work/config")

jq -n --arg c "$config" --argjson cs "$config_size" --arg l "$layer" --argjson ls "$layer_size" '{
        schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
        layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' \
        >"$work/manifest"
read -r manifest manifest_size < <(blob "$work/manifest")

jq -n --arg m "$manifest" --argjson ms "$manifest_size" --arg name "$name" '{
        schemaVersion: 2,
        manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
                     digest: $m, size: $ms,
                     annotations: {"io.containerd.image.name": $name,
                                   "org.opencontainers.image.ref.name": ($name | sub(".*:"; ""))}}]}' \
        >"$work/index.json"
echo '{"imageLayoutVersion": "1.0.0"}' >"$work/oci-layout"

tar -C "$work" -cf "$out" oci-layout index.json blobs
