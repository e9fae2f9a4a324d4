"""The interpreters table of the method chapter: every build of builds.toml, its origin (registry,
package, checksum) and its configure flags, then the retired builds; read from builds.toml and the
builds' own markers when the book builds.
"""
from __future__ import annotations

from ..judge import tables


def builds_table() -> str:
    """Every build of builds.toml as a Markdown table, for the method chapter (narrow enough to
    read at 1300 px: the full sha256 is in builds.toml): its origin (the registry, the package, the
    version fetched where it was built here, the upstream tarball's checksum), then the retired
    builds whose samples earlier campaigns hold, each with why nothing builds it now; the traced and
    the retired builds each folded under a line that counts them."""
    import shlex

    from ..measure import provision
    from ..measure.provision import package_version

    head = ["| build (built here?) | origin: registry, package, checksum | configure flags |", "|---|---|---|"]
    lines, traced = list(head), list(head)
    for spec in provision.all_specs():
        s = spec.src
        rec = provision.read_marker(spec)
        twin = f"<br>and `{spec.gil_twin[0]}`:<br>{spec.gil_twin[1]}={spec.gil_twin[2]}" if spec.gil_twin else ""
        lacks = [m for m, ok in (rec or {}).get("modules", {}).items() if not ok]
        verb = "unpacked" if spec.prebuilt else "built"
        built = (f"{verb} in {rec['build_seconds']:.0f} s" + (f"<br>without {', '.join(lacks)}" if lacks else "")
                 if rec and rec.get("build_seconds") else "not built")
        fetched = package_version(rec)
        if spec.debian_binary:
            how = (rec or {}).get("sys_version", "").split("[", 1)[-1].rstrip("]") if rec else ""
            n = len((rec or {}).get("packages", []))
            source = (f"Debian {s['suite']}, binary package `{s['deb']}`" + (f" {fetched}" if fetched else "")
                      + ": built by Debian" + (f" with {how}" if how else "") + ", unpacked here"
                      + (f" with the {n} packages it needs (its suite's C library among them)" if n else "")
                      + " into a private root<br>each package checked by apt against the suite's signed index")
            args = (rec or {}).get("builder_configure_args")
            used = [f for f in shlex.split(args) if f.startswith(("--enable-", "--disable-", "--with-lto"))] \
                if args is not None else []
            flags = "<br>".join([*(f"`{f}`" for f in used), "(Debian's)"])
        elif spec.prebuilt:
            group, artifact, version = s["maven"].split(":")
            how = (rec or {}).get("sys_version", "").split("[", 1)[-1].rstrip("]") if rec else ""
            source = (f"Maven Central, `{group}:{artifact}` {version} ({s['classifier']}): built by its publisher"
                      + (f" with {how}" if how else "") + f", unpacked here<br>sha256 `{s['sha256'][:10]}` of the jar")
            args = (rec or {}).get("builder_configure_args")
            used = [f for f in shlex.split(args) if f.startswith("--") and not f.startswith(("--prefix", "--with-openssl"))] \
                if args is not None else []
            flags = "<br>".join([*(f"`{f}`" for f in used), "(the publisher's)"])
        else:
            source = (f"Debian {s['suite']}, source package `{s['debian']}`" + (f" {fetched}" if fetched else "")
                      + f"<br>`{s['file']}`<br>sha256 `{s['sha256'][:10]}`, checked against the `.dsc` and `builds.toml`")
            flags = "<br>".join(f"`{f}`" for f in spec.configure_flags)
        (traced if spec.trace_of else lines).append(f"| `{spec.build_id}`{twin}<br>*{built}* | {source} | {flags} |")
    retired = list(head)
    for r in provision.retired().values():
        instead = f"; `{r.replaced_by}` plays its part" if r.replaced_by else ""
        retired.append(f"| `{r.build_id}`<br>*retired* | no longer built: {r.why}{instead} | - |")
    out = "\n".join(lines) + "\n"
    for rows, what in ((traced, "The traced builds (never measured: `gillab trace record` runs them)"),
                       (retired, "The retired builds (their samples in committed campaigns stay as data)")):
        if len(rows) > len(head):
            out += "\n" + tables.details_md(f"{what}: {len(rows) - len(head)}", "\n".join(rows))
    return out
