#!/usr/bin/env python3
"""Regenerate planner/emit/flags/*.json: every flag or config key a launch-config emitter may
write, as accepted by one pinned release of each target framework.

Reads the frameworks' sources from bare git mirrors (git show <commit>:<path>), parses them with
`ast` (never imports or runs them) and writes one JSON per framework version:
{"framework", "version", "repo", "commit", "commit_date", "extracted_from", "method", "flags"}.

    python3 planner/emit/flags/extract.py --mirrors /work/.mirror [--out planner/emit/flags]

A mirror of github.com/OWNER/NAME is looked for at MIRRORS/OWNER+NAME/repo, MIRRORS/OWNER+NAME
or MIRRORS/NAME (bare or not); --mirror OWNER/NAME=PATH overrides one. Python 3.9+, stdlib only.
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys

# --- git ------------------------------------------------------------------------------------


class Repo:
    def __init__(self, path, name):
        self.path, self.name = path, name

    def git(self, *args):
        return subprocess.run(["git", "-C", self.path, *args], check=True, capture_output=True,
                              text=True).stdout

    def commit(self, ref):
        return self.git("rev-parse", "--verify", ref + "^{commit}").strip()

    def date(self, commit):
        return self.git("log", "-1", "--format=%cI", commit).strip()

    def show(self, commit, path):
        return self.git("show", commit + ":" + path)

    def ls(self, commit, folder):
        return self.git("ls-tree", "--name-only", commit, folder.rstrip("/") + "/").split()


def find_mirror(mirrors, overrides, repo):
    if repo in overrides:
        return overrides[repo]
    owner, name = repo.split("/")
    for cand in (f"{owner}+{name}/repo", f"{owner}+{name}", name):
        path = os.path.join(mirrors, cand)
        if os.path.isdir(path):
            return path
    sys.exit(f"extract.py: no mirror of {repo} under {mirrors} (use --mirror {repo}=PATH)")


# --- Python source helpers ------------------------------------------------------------------


def str_const(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def argparse_flags(src, path):
    """Every option string of every add_argument call (all groups) in `src`."""
    tree = ast.parse(src, path)
    if "ArgumentGroupFactory" in src:
        sys.exit(f"extract.py: {path} derives flags from dataclasses (ArgumentGroupFactory); "
                 "extend extract.py to read those dataclasses before pinning this version")
    flags = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "add_argument":
            names = [str_const(a) for a in node.args]
            if not names or any(n is None for n in names):
                sys.exit(f"extract.py: {path}:{node.lineno}: add_argument with a computed name")
            flags.update(n for n in names if n.startswith("-"))
    return flags


def find_class(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    sys.exit(f"extract.py: class {name} not found")


def dataclass_fields(src, path, cls, aliases=False):
    """Annotated class-body fields of `cls` (a dataclass or pydantic model), and with `aliases`
    the alias="..." of pydantic Field(...) defaults."""
    node = find_class(ast.parse(src, path), cls)
    out = set()
    for st in node.body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(st.annotation) or st.target.id == "model_config":
            continue
        out.add(st.target.id)
        if aliases and isinstance(st.value, ast.Call):
            for kw in st.value.keywords:
                if kw.arg == "alias" and str_const(kw.value):
                    out.add(str_const(kw.value))
    return out


def init_params(src, path, cls, func="__init__"):
    """Named parameters of `cls.func` (or of the module-level function `func` when cls is None)."""
    tree = ast.parse(src, path)
    scope = find_class(tree, cls).body if cls else tree.body
    for st in scope:
        if isinstance(st, ast.FunctionDef) and st.name == func:
            a = st.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
            return {n for n in names if n not in ("self", "cls")}
    sys.exit(f"extract.py: {path}: {cls}.{func} not found")


def functions(src, path):
    return {st.name for st in ast.parse(src, path).body if isinstance(st, ast.FunctionDef)}


def enum_members(src, path, cls):
    node = find_class(ast.parse(src, path), cls)
    return {t.id for st in node.body if isinstance(st, ast.Assign) for t in st.targets if isinstance(t, ast.Name)}


def string_constants(src, path):
    """Module-level NAME = "string" assignments, in source order."""
    out = []
    for st in ast.parse(src, path).body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            v = str_const(st.value)
            if v is not None:
                out.append((st.targets[0].id, v))
    return out


KEY = re.compile(r"^[a-z][a-z0-9_]*$")

# --- extractors: (repo, commit) -> (flags, files, method) -------------------------------------


def megatron_lm(repo, c, _):
    path = "megatron/training/arguments.py"
    return argparse_flags(repo.show(c, path), path), [path], (
        "every option string of every parser.add_argument / group.add_argument call in "
        f"{path} (ast); this version builds no flags from config dataclasses (extract.py stops if "
        "it finds ArgumentGroupFactory); the parser has allow_abbrev=False, so only full names work")


def megatron_deepspeed(repo, c, extra):
    path = "megatron/arguments.py"
    flags = argparse_flags(repo.show(c, path), path)
    ds = extra["deepspeed"]
    ds_init = "deepspeed/__init__.py"
    flags |= argparse_flags(ds.repo.show(ds.commit, ds_init), ds_init)
    return flags, [path, f"{ds.repo.name}@{ds.version}:{ds_init}"], (
        f"add_argument option strings of {path} and of DeepSpeed's add_config_arguments "
        f"({ds_init}, which megatron/arguments.py calls: --deepspeed, --deepspeed_config)")


def deepspeed_config(repo, c, _):
    """ds_config.json keys as dotted paths (section.key)."""
    files = {
        "const": "deepspeed/runtime/constants.py",
        "zero": "deepspeed/runtime/zero/config.py",
        "offload": "deepspeed/runtime/zero/offload_config.py",
        "act": "deepspeed/runtime/activation_checkpointing/config.py",
        "launcher": "deepspeed/launcher/runner.py",
    }
    src = {k: repo.show(c, p) for k, p in files.items()}
    consts = string_constants(src["const"], files["const"])
    # Sub-keys of the precision sections share their section constant's prefix (FP16_LOSS_SCALE
    # under FP16 = "fp16"); data_types holds GRAD_ACCUM_DTYPE.
    sections = {"FP16_": "fp16", "BFLOAT16_": "bf16"}
    sub = {"GRAD_ACCUM_DTYPE": "data_types"}
    flags = set()
    for name, value in consts:
        if name.endswith(("_DEFAULT", "_FORMAT")) or not KEY.match(value):
            continue
        prefix = next((p for p in sections if name.startswith(p)), None)
        if name in sub:
            flags.add(f"{sub[name]}.{value}")
        elif prefix and name not in ("BFLOAT16_OLD",):
            flags.add(f"{sections[prefix]}.{value}")
        else:
            flags.add(value)
    flags.add("zero_optimization")
    flags |= {"zero_optimization." + f for f in dataclass_fields(src["zero"], files["zero"], "DeepSpeedZeroConfig",
                                                                   aliases=True)}
    for key, cls in (("offload_optimizer", "DeepSpeedZeroOffloadOptimizerConfig"),
                     ("offload_param", "DeepSpeedZeroOffloadParamConfig")):
        flags |= {f"zero_optimization.{key}.{f}" for f in dataclass_fields(src["offload"], files["offload"], cls)}
    act = dict(string_constants(src["act"], files["act"]))
    flags.add(act["ACT_CHKPT"])
    flags |= {f"{act['ACT_CHKPT']}.{v}" for n, v in act.items()
              if n.startswith("ACT_CHKPT_") and not n.endswith("_DEFAULT") and KEY.match(v)}
    flags |= {"launcher:" + f for f in argparse_flags(src["launcher"], files["launcher"])}
    return flags, list(files.values()), (
        "ds_config.json keys as dotted paths: top-level keys are the key-like string constants of "
        "runtime/constants.py (NAME = \"key\", not *_DEFAULT; a superset, as the file also names a few "
        "values), FP16_*/BFLOAT16_* constants as fp16.*/bf16.* and GRAD_ACCUM_DTYPE as data_types.*; "
        "zero_optimization.* are the pydantic fields and aliases of DeepSpeedZeroConfig, its "
        "offload_optimizer.*/offload_param.* those of the offload configs; activation_checkpointing.* "
        "the ACT_CHKPT_* constants; launcher:--x the `deepspeed` launcher's add_argument flags")


def torchtitan(repo, c, _):
    path = "torchtitan/config/job_config.py"
    src = repo.show(c, path)
    tree = ast.parse(src, path)
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    flags = set()

    def section(prefix, cls):  # a dataclass-typed field is a [sub.section] of its own
        for st in find_class(tree, cls).body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                name, kind = f"{prefix}.{st.target.id}" if prefix else st.target.id, ast.unparse(st.annotation)
                flags.add(name)
                if kind in classes:
                    section(name, kind)

    section("", "JobConfig")
    conv = "torchtitan/components/quantization"
    files = [path]
    for f in repo.ls(c, conv):
        if f.endswith(".py"):
            for node in ast.walk(ast.parse(repo.show(c, f), f)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register_model_converter":
                    flags.add("converter:" + str_const(node.args[1]))
                    files.append(f)
    return flags, sorted(set(files)), (
        "TOML [section] key as section.key: each field of JobConfig is a section, its keys the fields "
        "of that field's dataclass, recursively ([quantize.linear.float8] is quantize.linear.float8.*) "
        "(ast); converter:NAME for each register_model_converter name (the values model.converters "
        "takes); experiment-specific job configs are not included")


def nemo(repo, c, extra):
    mc = extra["mcore"]
    n = {
        "strategy": "nemo/lightning/pytorch/strategies/megatron_strategy.py",
        "gpt": "nemo/collections/llm/gpt/model/base.py",
        "mp": "nemo/lightning/pytorch/plugins/mixed_precision.py",
        "mp_recipes": "nemo/collections/llm/recipes/precision/mixed_precision.py",
        "overlap": "nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py",
        "mock": "nemo/collections/llm/gpt/data/mock.py",
        "optim": "nemo/lightning/pytorch/optim/megatron.py",
        "api": "nemo/collections/llm/api.py",
    }
    m = {
        "tc": "megatron/core/transformer/transformer_config.py",
        "mpc": "megatron/core/model_parallel_config.py",
        "ddp": "megatron/core/distributed/distributed_data_parallel_config.py",
        "opt": "megatron/core/optimizer/optimizer_config.py",
        "enums": "megatron/core/transformer/enums.py",
    }
    ns = {k: repo.show(c, p) for k, p in n.items()}
    ms = {k: mc.repo.show(mc.commit, p) for k, p in m.items()}
    gpt = dataclass_fields(ns["gpt"], n["gpt"], "GPTConfig") | dataclass_fields(ms["tc"], m["tc"], "TransformerConfig")
    gpt |= dataclass_fields(ms["mpc"], m["mpc"], "ModelParallelConfig")
    objects = {
        "MegatronStrategy": init_params(ns["strategy"], n["strategy"], "MegatronStrategy"),
        "GPTConfig": gpt,
        "GPTModel": init_params(ns["gpt"], n["gpt"], "GPTModel"),
        "MegatronMixedPrecision": init_params(ns["mp"], n["mp"], "MegatronMixedPrecision"),
        "MegatronCommOverlapCallback": init_params(ns["overlap"], n["overlap"], "MegatronCommOverlapCallback"),
        "MockDataModule": init_params(ns["mock"], n["mock"], "MockDataModule"),
        "MegatronOptimizerModule": init_params(ns["optim"], n["optim"], "MegatronOptimizerModule"),
        "pretrain": init_params(ns["api"], n["api"], None, "pretrain"),
        "DistributedDataParallelConfig": dataclass_fields(ms["ddp"], m["ddp"], "DistributedDataParallelConfig"),
        "OptimizerConfig": dataclass_fields(ms["opt"], m["opt"], "OptimizerConfig"),
        "AttnBackend": enum_members(ms["enums"], m["enums"], "AttnBackend"),
        "mixed_precision": functions(ns["mp_recipes"], n["mp_recipes"]),
        "recipes": {f[len("nemo/collections/llm/recipes/"):-3] for f in repo.ls(c, "nemo/collections/llm/recipes")
                    if f.endswith(".py") and not f.endswith("__init__.py")},
    }
    flags = {f"{obj}.{f}" for obj, fs in objects.items() for f in fs}
    mfiles = [f"{mc.repo.name}@{mc.version}:{p}" for p in m.values()]
    return flags, list(n.values()) + ["nemo/collections/llm/recipes/*.py"] + mfiles, (
        "Object.field for everything a recipe override can reach: __init__ parameters of "
        "MegatronStrategy, GPTModel, MegatronMixedPrecision, MegatronCommOverlapCallback, MockDataModule, "
        "MegatronOptimizerModule and llm.pretrain; dataclass fields of GPTConfig (NeMo's own plus "
        "Megatron-Core's TransformerConfig and ModelParallelConfig), DistributedDataParallelConfig and "
        "OptimizerConfig at the Megatron-Core release NeMo pins; AttnBackend members; mixed_precision.* "
        "recipe factories; recipes.* recipe modules (ast)")


def slurm(repo, c, _):
    flags, files = set(), []
    for tool in ("sbatch", "srun"):
        path = f"doc/man/man1/{tool}.1"
        lines = repo.show(c, path).splitlines()
        for i, line in enumerate(lines[:-1]):
            if line.startswith(".TP"):
                for name in re.findall(r"\\fB\\-\\-([a-z0-9\\-]+)\\fR", lines[i + 1]):
                    flags.add(f"{tool}:--" + name.replace("\\-", "-"))
        files.append(path)
    return flags, files, ("the long options of the sbatch and srun man pages (the \\fB\\-\\-name\\fR of every .TP "
                          "entry), as tool:--name")


# --- what to extract ------------------------------------------------------------------------


class Pin:
    def __init__(self, out, framework, version, repo, ref, fn, needs=(), note=""):
        self.out, self.framework, self.version, self.repo_name = out, framework, version, repo
        self.ref, self.fn, self.needs, self.note = ref, fn, needs, note


PINS = [
    Pin("megatron-lm_core_r0.8.0.json", "megatron-lm", "core_r0.8.0", "NVIDIA/Megatron-LM", "refs/tags/core_r0.8.0",
        megatron_lm, note="Megatron-Core 0.8 (2024): stacks megatron-core-2024 and nemo-24.07"),
    Pin("megatron-lm_core_v0.14.0.json", "megatron-lm", "core_v0.14.0", "NVIDIA/Megatron-LM", "refs/tags/core_v0.14.0",
        megatron_lm, note="Megatron-Core of Megatron-Bridge 25.09 (v0.1.0: megatron-core>=0.14.0a0,<0.15.0): "
        "--fp8-recipe mxfp8, no NVFP4 (--fp4-format arrives in core_v0.15.0)"),
    Pin("megatron-lm_core_v0.15.0.json", "megatron-lm", "core_v0.15.0", "NVIDIA/Megatron-LM", "refs/tags/core_v0.15.0",
        megatron_lm, note="last Megatron-Core release of 2025 (stack megatron-core-2025)"),
    Pin(None, "megatron-lm", "core_v0.13.0", "NVIDIA/Megatron-LM", "refs/tags/core_v0.13.0", None,
        note="Megatron-Core of NeMo v2.4.0 (its requirements/manifest.json pins 03f7793 on core_r0.13.0)"),
    Pin("deepspeed_v0.16.9.json", "deepspeed", "v0.16.9", "deepspeedai/DeepSpeed", "refs/tags/v0.16.9",
        deepspeed_config, note="last 0.16 release"),
    Pin("megatron-deepspeed_4efb479.json", "megatron-deepspeed", "main-2025-07-16", "deepspeedai/Megatron-DeepSpeed",
        "4efb479d5317ce9b86096b9d8e3e8030b0b5263b", megatron_deepspeed, needs=("deepspeed",),
        note="newest commit of main: the repository's last release tag is v2.4 (2021)"),
    Pin("nemo_v2.4.0.json", "nemo", "v2.4.0", "NVIDIA/NeMo", "refs/tags/v2.4.0", nemo, needs=("mcore",),
        note="NeMo 2.0 API, newest v2.x release (25.07 container)"),
    Pin("torchtitan_v0.2.1.json", "torchtitan", "v0.2.1", "pytorch/torchtitan", "refs/tags/v0.2.1", torchtitan,
        note="late-2025 TOML schema"),
    Pin("slurm_24.11.7.json", "slurm", "slurm-24-11-7-1", "SchedMD/slurm", "refs/tags/slurm-24-11-7-1", slurm,
        note="Slurm 24.11"),
]
DEPENDS = {"deepspeed": "v0.16.9", "mcore": "core_v0.13.0"}


class Resolved:
    def __init__(self, pin, repo):
        self.repo, self.version = repo, pin.version
        self.commit = repo.commit(pin.ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--mirror", action="append", default=[], help="OWNER/NAME=PATH")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--only", action="append", default=[], help="output file name(s) to regenerate")
    args = ap.parse_args()
    overrides = dict(m.split("=", 1) for m in args.mirror)
    repos = {}

    def resolve(pin):
        if pin.repo_name not in repos:
            repos[pin.repo_name] = Repo(find_mirror(args.mirrors, overrides, pin.repo_name), pin.repo_name)
        return Resolved(pin, repos[pin.repo_name])

    deps = {}  # resolved on first use: regenerating one file needs only its own mirrors
    for pin in PINS:
        if pin.out is None or (args.only and pin.out not in args.only):
            continue
        for key in pin.needs:
            if key not in deps:
                deps[key] = resolve(next(p for p in PINS if p.version == DEPENDS[key]))
        r = resolve(pin)
        flags, files, method = pin.fn(r.repo, r.commit, deps)
        doc = {"framework": pin.framework, "version": pin.version, "repo": "https://github.com/" + pin.repo_name,
               "commit": r.commit, "commit_date": r.repo.date(r.commit), "why": pin.note}
        for key in pin.needs:
            d = deps[key]
            doc["with_" + key] = {"repo": "https://github.com/" + d.repo.name, "version": d.version,
                                  "commit": d.commit}
        doc.update({"extracted_from": files, "method": method, "flags": sorted(flags)})
        with open(os.path.join(args.out, pin.out), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{pin.out}: {len(flags)} flags at {r.commit[:12]}")


if __name__ == "__main__":
    main()
