"""Jars from the Maven repository, resolved with Apache Ivy and cached on disk.

Resolution uses the Ivy that ships inside PySpark (`pyspark/jars/ivy-*.jar`), run as a plain Java
program: it is the resolver Spark itself uses for `spark.jars.packages`, it reads POMs with their
scopes, exclusions, parent POMs and version conflicts as Maven does, and it is always present
wherever the project is installed, so nothing else (Maven, a Kafka download) is needed. One Ivy
settings file serves both the broker's jars and Spark's Kafka source (`spark.jars.ivySettings`),
so both come from the same repository into the same cache.

Cache layout (root: $TICDC_CONFORMANCE_CACHE, else $XDG_CACHE_HOME/ticdc-conformance, else
~/.cache/ticdc-conformance):
  ivy/ivysettings.xml      the settings (Maven Central, or $TICDC_CONFORMANCE_MAVEN_REPO)
  ivy/cache/               Ivy's artifact cache (POMs and jars)
  ivy/jars/                jars Spark retrieved for spark.jars.packages
  jars/<name>/classpath    a resolved classpath; once written, later runs start no resolver at all
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from ticdc_conformance.errors import SPARK_EXTRA

from .errors import JarResolutionError

MAVEN_REPO_ENV = "TICDC_CONFORMANCE_MAVEN_REPO"
CACHE_ENV = "TICDC_CONFORMANCE_CACHE"
RESOLVE_TIMEOUT_S = 900
# Maven packaging "bundle" (OSGi) jars are typed "bundle" by Ivy; both kinds are plain jars.
ARTIFACT_TYPES = ("jar", "bundle")


@dataclass(frozen=True)
class Module:
    organisation: str
    name: str
    revision: str

    def __str__(self) -> str:
        return f"{self.organisation}:{self.name}:{self.revision}"


def cache_root() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ticdc-conformance"


def ivy_home() -> Path:
    return cache_root() / "ivy"


def java_executable() -> str:
    """JAVA_HOME's java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise JarResolutionError("no Java runtime: set JAVA_HOME or put java (17 or newer) on PATH")
    return found


def ivy_jar() -> Path:
    try:
        import pyspark
    except ImportError:
        raise JarResolutionError(f"resolving jars from Maven uses the Ivy inside PySpark, which is not installed here: "
                                 f"{SPARK_EXTRA}") from None

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("ivy-*.jar"))
    if not jars:
        raise JarResolutionError(f"no Ivy jar in {Path(pyspark.__file__).parent / 'jars'}; is PySpark installed whole?")
    return jars[-1]


def ivy_settings() -> Path:
    """Writes (if changed) and returns the Ivy settings file: one Maven-layout repository."""
    home = ivy_home()
    home.mkdir(parents=True, exist_ok=True)
    repo = os.environ.get(MAVEN_REPO_ENV)
    # Without a root, Ivy's ibiblio resolver reads Maven Central.
    root = f" root={quoteattr(repo)}" if repo else ""
    text = (
        "<ivysettings>\n"
        '  <settings defaultResolver="maven"/>\n'
        f"  <caches defaultCacheDir={quoteattr(str(home / 'cache'))}/>\n"
        "  <resolvers>\n"
        f'    <ibiblio name="maven" m2compatible="true"{root}/>\n'
        "  </resolvers>\n"
        "</ivysettings>\n"
    )
    path = home / "ivysettings.xml"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _ivy_module(name: str, modules: tuple[Module, ...]) -> str:
    deps = "\n".join(
        f"    <dependency org={quoteattr(m.organisation)} name={quoteattr(m.name)} rev={quoteattr(m.revision)}"
        ' conf="default->default"/>' for m in modules)
    return (
        '<ivy-module version="2.0">\n'
        f'  <info organisation="ticdc-conformance" module={quoteattr(name)}/>\n'
        '  <configurations><conf name="default"/></configurations>\n'
        f"  <dependencies>\n{deps}\n  </dependencies>\n"
        "</ivy-module>\n"
    )


@dataclass(frozen=True)
class Resolved:
    modules: tuple[Module, ...]
    jars: tuple[Path, ...]


def _cached(target: Path) -> Resolved | None:
    classpath, chosen = target / "classpath", target / "modules"
    if not classpath.exists() or not chosen.exists():
        return None
    jars = tuple(Path(p) for p in classpath.read_text().strip().split(os.pathsep) if p)
    modules = tuple(Module(*line.split(":")) for line in chosen.read_text().split())
    return Resolved(modules, jars) if jars and all(j.exists() for j in jars) else None


def _run_ivy(target: Path, name: str, modules: tuple[Module, ...]) -> str:
    """Resolves `modules` with Ivy; returns the classpath it wrote."""
    (target / "ivy.xml").write_text(_ivy_module(name, modules))
    fresh = target / "classpath.new"
    fresh.unlink(missing_ok=True)
    argv = [java_executable(), f"-Divy.default.ivy.user.dir={ivy_home()}", "-jar", str(ivy_jar()),
            "-settings", str(ivy_settings()), "-ivy", str(target / "ivy.xml"), "-confs", "default",
            "-types", *ARTIFACT_TYPES, "-cachepath", str(fresh), "-warn"]
    wanted = ", ".join(map(str, modules))
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise JarResolutionError(f"resolving {wanted} did not finish within {RESOLVE_TIMEOUT_S}s") from None
    if proc.returncode != 0 or not fresh.exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise JarResolutionError(f"could not resolve {wanted} (Ivy exited with {proc.returncode}):\n{tail}")
    return fresh.read_text()


def resolve_first(name: str, alternatives: list[tuple[Module, ...]], echo=None) -> Resolved:
    """The first of `alternatives` (each a set of modules) that resolves whole, with every runtime
    dependency, and its jars; the choice is cached under `name` with the classpath.

    A cached choice whose jars all still exist is returned without starting Java; otherwise Ivy
    resolves (downloading what its cache lacks). Concurrent callers wait for one another.
    """
    target = cache_root() / "jars" / name
    cached = _cached(target)
    if cached is not None:
        return cached
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = _cached(target)
        if cached is not None:
            return cached
        failures: list[JarResolutionError] = []
        for modules in alternatives:
            if echo:
                echo(f"resolving {', '.join(map(str, modules))} from the Maven repository (cached in {target})")
            try:
                classpath = _run_ivy(target, name, modules)
            except JarResolutionError as e:
                failures.append(e)
                continue
            (target / "modules").write_text("".join(f"{m}\n" for m in modules))
            (target / "classpath").write_text(classpath)
            resolved = _cached(target)
            if resolved is None:
                raise JarResolutionError(f"Ivy wrote an empty or stale classpath in {target / 'classpath'}")
            return resolved
    if len(failures) == 1:
        raise failures[0]
    raise JarResolutionError(f"none of {len(failures)} alternatives resolved; the last one: {failures[-1]}")


def resolve(name: str, modules: tuple[Module, ...], echo=None) -> tuple[Path, ...]:
    """The jars of `modules` and their runtime dependencies, resolved once and cached under `name`."""
    return resolve_first(name, [modules], echo).jars
