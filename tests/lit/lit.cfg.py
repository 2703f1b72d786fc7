# lit configuration for irisc's emitted-IR tests.
#
# Pass tests are `.mlir` modules run through `irisc opt --passes=...` (RUN and CHECK lines in
# `//` comments); the `.test` files run `irisc build` on a program end to end.
# Run from the repository root after building the compiler:
#   IRISC=target/debug/irisc /usr/lib/llvm-22/bin/lit -v tests/lit
# One folder per stage or pass (emit/, opt/, passes/ring-select/, passes/variant-select/,
# passes/irs-to-mpc/; lit finds subfolders itself). Each test runs `irisc build` on a program in
# Inputs/ (kept apart so the .irs files hold only the program, and excluded below), checks one
# stage or pass with FileCheck, and re-verifies emitted MLIR against the IRDL dialects with
# mlir-opt.

import os

import lit.formats

config.name = "irisc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(os.environ.get("IRISC_LIT_TMP", "/tmp"), "irisc-lit")

llvm_bin = "/usr/lib/llvm-22/bin"
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])

irisc = os.environ.get("IRISC")
if not irisc:
    lit_config.fatal("set IRISC to the irisc executable, e.g. IRISC=target/debug/irisc")
irisc = os.path.abspath(irisc)
if not os.path.isfile(irisc):
    lit_config.fatal(f"IRISC={irisc} does not exist; build it with `cargo build -p irisc`")

repo = os.path.dirname(os.path.dirname(config.test_source_root))
config.substitutions.append(("%irisc", irisc))
config.substitutions.append(("%dialects", os.path.join(repo, "dialects")))
config.substitutions.append(("%mlir-opt", os.path.join(llvm_bin, "mlir-opt")))

# Pass tests that start from `.mlir` run `irisc opt`; where this irisc has no `opt` command they
# are reported unsupported rather than failed.
import subprocess

if subprocess.run([irisc, "opt", "--help"], capture_output=True).returncode == 0:
    config.available_features.add("irisc-opt")
