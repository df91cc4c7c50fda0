"""YugabyteDB releases the yugabytedb-3node template can install: version -> build.

A release's download is ``yugabyte-<version>-<build>-linux-x86_64.tar.gz``; a wrong build number
renders a URL that does not exist and the nodes never start (CheckTarget times out after an hour).
So the build comes from this table, and a version missing from it is refused at validation.
Each row names where its build number was read; add a row the same way (the release notes'
"Build:" line for that version).
"""

from __future__ import annotations

YSQL_USER = YSQL_DATABASE = "yugabyte"  # what a fresh YugabyteDB cluster has (no password)

YUGABYTEDB_BUILDS: dict[str, str] = {
    # docs/content/preview/releases/ybdb-releases/v2024.2.md in github.com/yugabyte/yugabyte-db:
    # "v2024.2.0.0 - December 9, 2024 ... Build: 2024.2.0.0-b145" (docs.yugabyte.com release notes)
    "2024.2.0.0": "b145",
    # docs/data/currentVersions.json in github.com/yugabyte/yugabyte-db (the docs' release table),
    # "appVersion" of each series' current release when read:
    "2024.2.2.2": "b2",  # series v2024.2 (LTS)
    "2024.1.6.0": "b53",  # series v2024.1 (STS)
    "2.20.10.0": "b29",  # series v2.20 (LTS)
}


def known_versions() -> str:
    return ", ".join(sorted(YUGABYTEDB_BUILDS, key=lambda v: tuple(int(p) for p in v.split("."))))


def yugabytedb_build(version: str) -> str:
    """The build of a known release; a ValueError listing the known ones otherwise."""
    build = YUGABYTEDB_BUILDS.get(version)
    if build is None:
        raise ValueError(
            f"version: YugabyteDB {version} is not in benchwright's table of releases with a known "
            f"build number (known: {known_versions()}); its download URL cannot be formed"
        )
    return build
