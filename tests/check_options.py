#!/usr/bin/env python3
"""tests/check_options.py SRC_DIR - corpus/*.options are valid ClusterFuzz /
OSS-Fuzz options files and agree with sanitizers/*.options.

Each corpus/<target>.options must parse as INI (what OSS-Fuzz's
parse_options.py and ci/fuzz.sh read), start with [libfuzzer] (max_len set,
its dict present), have only [libfuzzer]/[asan]/[ubsan]/[msan]/[tsan]/[lsan]
sections, and every sanitizer option it sets must be set to the same value
in sanitizers/<tool>.options (one place decides an option's value; the
sections only carry it to runners outside this tree).  Every sanitizer
section and every sanitizers/<tool>.options sets dedup_token_length=3: the
DEDUP_TOKEN line is what kmgr-repro triage buckets sanitizer reports by.
One line per problem; exit 1 if any, 2 on bad usage."""
import configparser
import pathlib
import sys

SANITIZERS = ("asan", "ubsan", "msan", "tsan", "lsan")
DEDUP = ("asan", "ubsan", "msan", "tsan")


def tool_options(src, tool):
    opts = {}
    path = src / "sanitizers" / f"{tool}.options"
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            opts[key.strip()] = value.strip()
    return opts


def check_target(src, path, tools, problems):
    ini = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"))
    try:
        ini.read_string(path.read_text(), source=str(path))
    except configparser.Error as e:
        problems.append(f"{path}: does not parse: {e}".replace("\n", " "))
        return
    sections = ini.sections()
    if not sections or sections[0] != "libfuzzer":
        problems.append(f"{path}: the first section is not [libfuzzer] ({sections})")
    if "libfuzzer" in ini:
        lf = ini["libfuzzer"]
        if "max_len" not in lf:
            problems.append(f"{path}: [libfuzzer] has no max_len")
        if "dict" in lf and not (path.parent / lf["dict"]).is_file():
            problems.append(f"{path}: dict {lf['dict']} does not exist")
    for sec in sections[1:]:
        if sec not in SANITIZERS:
            problems.append(f"{path}: unknown section [{sec}]")
            continue
        for key, value in ini[sec].items():
            want = tools[sec].get(key)
            if want != value:
                problems.append(f"{path}: [{sec}] {key} = {value}, but sanitizers/"
                                f"{sec}.options has {key}={want}")
        if sec in DEDUP and ini[sec].get("dedup_token_length") != "3":
            problems.append(f"{path}: [{sec}] does not set dedup_token_length = 3")
    missing = [s for s in DEDUP if s not in sections]
    if missing:
        problems.append(f"{path}: no section for {', '.join(missing)}")


def main():
    if len(sys.argv) != 2 or not pathlib.Path(sys.argv[1], "corpus").is_dir():
        print("usage: check_options.py SRC_DIR", file=sys.stderr)
        return 2
    src = pathlib.Path(sys.argv[1])
    tools = {t: tool_options(src, t) for t in SANITIZERS}
    problems = []
    for tool in DEDUP:
        if tools[tool].get("dedup_token_length") != "3":
            problems.append(f"sanitizers/{tool}.options: dedup_token_length is not 3")
    files = sorted((src / "corpus").glob("*.options"))
    if not files:
        problems.append("corpus/: no .options files")
    for path in files:
        check_target(src, path, tools, problems)
    for p in problems:
        print(f"check_options: {p}")
    if not problems:
        print(f"check_options: {len(files)} options files agree with sanitizers/*.options")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
