"""YCSB property files as they are: parsing, the packaged workloads a-f, and validation.

``-P FILE`` may name a file or one of the packaged core workloads (``workloada`` .. ``workloadf``);
later files and ``-p key=value`` overrides win, as in YCSB. Keys Benchwright does not know are kept
and reported as warnings naming them, unless one is a near miss of a known key (``recordcnt``):
that is an error saying which key was meant. Values that cannot work are errors naming the key.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from benchwright.errors import PropertyFileError, SpecError

MAX_PROPERTY_FILE = 256 * 1024  # a property file is settings, not data (the one file rule: specguard)
MAX_RECORD_BYTES = 1 << 16  # ycsb.workload.VALUE_POOL: values are slices of a pool this long
PACKAGED = ("workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf")
DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")
LENGTH_DISTRIBUTIONS = ("constant", "uniform", "zipfian")

# Keys YCSB (or its bindings) defines that we accept without acting on them: no warning.
ACCEPTED_AS_IS = {
    "workload",
    "db",
    "exporter",
    "exportfile",
    "measurementtype",
    "measurement.trackjvm",
    "histogram.buckets",
    "timeseries.granularity",
    "dotransactions",
    "readallfieldsbyname",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "fieldnameprefix",
    "debug",
    "jdbc.driver",
    "db.driver",
    "db.user",
    "db.passwd",
    "db.batchsize",
    "jdbc.fetchsize",
    "jdbc.autocommit",
    "jdbc.batchupdateapi",
    "jdbc.prependtablename",
    "redis.cluster",
    "measurement.interval",
    "status.interval",
    "zeropadding",
    "insertorder",
    "postgres.ddl_suffix",
}
CONNECTION_PREFIXES = ("postgres.", "redis.", "mysql.", "null.", "db.", "benchwright.", "client.")


def packaged_path(name: str) -> Path | None:
    if name in PACKAGED:
        return Path(str(resources.files("benchwright.runner.workloads.ycsb") / "workloads" / name))
    return None


def parse_property_file(path: Path, display: str | None = None) -> dict[str, str]:
    """A property file named on the command line (``-P``) or packaged: regular, small, UTF-8."""
    from benchwright.yamlload import read_text

    shown = display or str(path)
    try:
        text = read_text(path, "property file", MAX_PROPERTY_FILE)
    except SpecError as exc:
        raise PropertyFileError(shown, 0, exc.detail) from None
    return parse_property_text(text, shown)


def parse_property_text(text: str, shown: str) -> dict[str, str]:
    """Java .properties subset YCSB files use: key=value or key: value, # and ! comments.
    Errors name the file and line but never echo the line: the file may not be what it seems."""
    props: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i > 0), default=-1)
        if sep <= 0:
            raise PropertyFileError(shown, number, "expected key=value (or key: value)")
        key, value = line[:sep].strip(), line[sep + 1 :].strip()
        if not key or " " in key:
            raise PropertyFileError(shown, number, "invalid key (a key has no spaces)")
        props[key] = value
    return props


def load_properties(files: list[str], overrides: dict[str, str]) -> dict[str, str]:
    """Merge property files (paths or packaged names) and overrides, later ones winning."""
    props: dict[str, str] = {}
    for name in files:
        packaged = packaged_path(name)
        path = packaged if packaged is not None else Path(name)
        if packaged is None and not path.exists():
            raise PropertyFileError(name, 0, f"no such file (packaged workloads: {', '.join(PACKAGED)})")
        props.update(parse_property_file(path, display=name))
    props.update(overrides)
    return props


@dataclass(frozen=True)
class CoreSettings:
    """The validated, typed view of a YCSB core workload's properties."""

    table: str
    recordcount: int
    operationcount: int
    insertstart: int
    insertcount: int
    maxexecutiontime: float | None
    fieldcount: int
    fieldlength: int
    minfieldlength: int
    fieldlengthdistribution: str
    readallfields: bool
    writeallfields: bool
    readproportion: float
    updateproportion: float
    insertproportion: float
    scanproportion: float
    readmodifywriteproportion: float
    requestdistribution: str
    zipfianconstant: float
    hotspotdatafraction: float
    hotspotopnfraction: float
    exponential_percentile: float
    exponential_frac: float
    minscanlength: int
    maxscanlength: int
    scanlengthdistribution: str
    ordered_inserts: bool
    zeropadding: int
    fieldnameprefix: str
    threadcount: int
    target: float | None
    status_interval: float


KNOWN = {
    "table",
    "recordcount",
    "operationcount",
    "insertstart",
    "insertcount",
    "maxexecutiontime",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "zipfianconstant",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "fieldnameprefix",
    "threadcount",
    "target",
    "status.interval",
}


def _int(props: dict[str, str], key: str, default: int, minimum: int = 0) -> int:
    raw = props.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise SpecError(key, f"expected an integer, got {raw!r}") from None
    if value < minimum:
        raise SpecError(key, f"must be >= {minimum}, got {value}")
    return value


def _float(
    props: dict[str, str], key: str, default: float, low: float = 0.0, high: float = math.inf
) -> float:
    raw = props.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SpecError(key, f"expected a number, got {raw!r}") from None
    if not (low <= value <= high) or math.isnan(value):
        raise SpecError(key, f"must be between {low} and {high}, got {value}")
    return value


def _bool(props: dict[str, str], key: str, default: bool) -> bool:
    raw = props.get(key)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise SpecError(key, f"expected true or false, got {raw!r}")


def _choice(props: dict[str, str], key: str, default: str, options: tuple[str, ...]) -> str:
    value = props.get(key, default) or default
    if value not in options:
        raise SpecError(key, f"{value!r} is not one of {', '.join(options)}")
    return value


def unknown_keys(props: dict[str, str]) -> list[str]:
    return sorted(
        k
        for k in props
        if k not in KNOWN and k not in ACCEPTED_AS_IS and not k.startswith(CONNECTION_PREFIXES)
    )


TYPO_CUTOFF = 0.85  # difflib ratio from which an unknown key is taken for a misspelt known one


def nearest_key(key: str, cutoff: float = TYPO_CUTOFF) -> str | None:
    """The YCSB property ``key`` most likely misspells (``recordcnt`` -> ``recordcount``), if any:
    compared with the known keys of its own namespace (none: the core ones), so a binding's
    ``driver`` is not taken for ``db.driver``."""
    prefix = key.rpartition(".")[0]
    names = sorted(k for k in KNOWN | ACCEPTED_AS_IS if k.rpartition(".")[0] == prefix)
    close = difflib.get_close_matches(key.lower(), names, n=1, cutoff=cutoff)
    return close[0] if close else None


def unknown_key_warning(key: str) -> str:
    """The warning for an unknown key YCSB would ignore (a binding's, say), with the nearest guess."""
    near = nearest_key(key, 0.6)
    return f"unknown property {key!r} is ignored" + (f" (did you mean {near}?)" if near else "")


def check_misspelt(props: dict[str, str]) -> None:
    """An unknown key this close to a known one is a typo, and YCSB would silently measure the
    default instead (``recordcnt=100000`` loads 1000 records): refused, naming the key it meant."""
    for key in unknown_keys(props):
        near = nearest_key(key)
        if near is not None:
            raise SpecError(key, f"unknown property: did you mean {near}?")


def core_settings(props: dict[str, str]) -> CoreSettings:
    """Validate and type the properties; raise SpecError naming the first bad key."""
    check_misspelt(props)
    recordcount = _int(props, "recordcount", 1000, 1)  # 0: no key to read, the workers die
    insertstart = _int(props, "insertstart", 0)
    insertcount = _int(props, "insertcount", max(0, recordcount - insertstart))
    if insertstart + insertcount > recordcount and "insertcount" in props:
        raise SpecError(
            "insertcount",
            f"insertstart + insertcount ({insertstart + insertcount}) exceeds recordcount ({recordcount})",
        )
    proportions = {
        k: _float(props, k, d, 0.0, 1.0)
        for k, d in (
            ("readproportion", 0.95),
            ("updateproportion", 0.05),
            ("insertproportion", 0.0),
            ("scanproportion", 0.0),
            ("readmodifywriteproportion", 0.0),
        )
    }
    total = sum(proportions.values())
    if abs(total - 1.0) > 1e-6:
        named = ", ".join(f"{k}={v:g}" for k, v in proportions.items() if v)
        raise SpecError("readproportion", f"operation proportions must sum to 1, got {total:g} ({named})")
    fieldlength = _int(props, "fieldlength", 100, 1)
    minfieldlength = _int(props, "minfieldlength", 1, 1)
    fieldcount = _int(props, "fieldcount", 10, 1)
    if fieldlength * fieldcount > MAX_RECORD_BYTES:
        raise SpecError(
            "fieldlength",
            f"fieldlength x fieldcount = {fieldlength * fieldcount:,} bytes exceeds {MAX_RECORD_BYTES:,}, "
            "the largest record the value generator makes (values would be cut short)",
        )
    if minfieldlength > fieldlength:
        raise SpecError("minfieldlength", f"{minfieldlength} exceeds fieldlength {fieldlength}")
    minscan = _int(props, "minscanlength", 1, 1)
    maxscan = _int(props, "maxscanlength", 1000, 1)
    if minscan > maxscan:
        raise SpecError("minscanlength", f"{minscan} exceeds maxscanlength {maxscan}")
    order = _choice(props, "insertorder", "hashed", ("hashed", "ordered"))
    target = _float(props, "target", 0.0)
    maxtime = _float(props, "maxexecutiontime", 0.0)
    settings = CoreSettings(
        table=props.get("table", "usertable") or "usertable",
        recordcount=recordcount,
        operationcount=_int(props, "operationcount", 1000),
        insertstart=insertstart,
        insertcount=insertcount,
        maxexecutiontime=maxtime or None,
        fieldcount=fieldcount,
        fieldlength=fieldlength,
        minfieldlength=minfieldlength,
        fieldlengthdistribution=_choice(props, "fieldlengthdistribution", "constant", LENGTH_DISTRIBUTIONS),
        readallfields=_bool(props, "readallfields", True),
        writeallfields=_bool(props, "writeallfields", False),
        requestdistribution=_choice(props, "requestdistribution", "uniform", DISTRIBUTIONS),
        zipfianconstant=_float(props, "zipfianconstant", 0.99, 0.0, 0.999999),
        hotspotdatafraction=_float(props, "hotspotdatafraction", 0.2, 0.0, 1.0),
        hotspotopnfraction=_float(props, "hotspotopnfraction", 0.8, 0.0, 1.0),
        exponential_percentile=_float(props, "exponential.percentile", 95.0, 0.0, 99.999999),
        exponential_frac=_float(props, "exponential.frac", 0.8571428571, 1e-9, 1.0),
        minscanlength=minscan,
        maxscanlength=maxscan,
        scanlengthdistribution=_choice(props, "scanlengthdistribution", "uniform", ("uniform", "zipfian")),
        ordered_inserts=order == "ordered",
        zeropadding=_int(props, "zeropadding", 1, 1),
        fieldnameprefix=props.get("fieldnameprefix", "field") or "field",
        threadcount=_int(props, "threadcount", 1, 1),
        target=target or None,
        status_interval=_float(props, "status.interval", 10.0, 0.1),
        **proportions,
    )
    if settings.table and not settings.table.replace("_", "").isalnum():
        raise SpecError("table", f"{settings.table!r} is not a plain identifier")
    return settings
