// SPDX-License-Identifier: MIT
//! Builds brisk's C sources into a static library with the `cc` crate (no
//! CMake), with the defines and flags of CMake's `brisk_objects` that change
//! the code, and writes the Rust form of `struct brisk_stats` from brisk.h.
//!
//! Where the sources are: in the brisk repository, three folders up
//! (`bindings/rust/briskalloc-sys/../../..`); in a packaged crate, `c_src/`,
//! which `bindings/rust/vendor.sh` fills before `cargo package` (cargo packs
//! only files inside the crate's folder). The repository wins when both
//! exist, so that a stale `c_src/` never hides an edit to `src/`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

// Sources that CMakeLists.txt leaves out of a Windows build.
const LINUX_ONLY: &[&str] = &["src/platform/linux_unwind.c"];

const SUPPORTED: &str = "brisk supports Linux on x86-64 with glibc (x86_64-unknown-linux-gnu) \
and 64-bit Windows with MinGW-w64 (x86_64-pc-windows-gnu); a port implements \
src/platform/platform.h for its OS";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = source_root(&manifest);
    let target = Target::from_env();
    if !target.supported() {
        panic!("briskalloc-sys cannot build for {}: {}", target.triple, SUPPORTED);
    }
    let override_malloc = env::var_os("CARGO_FEATURE_OVERRIDE").is_some();
    if override_malloc && target.windows {
        panic!(
            "briskalloc-sys: the `override` feature is for Linux only: a Windows program's malloc \
             belongs to its C runtime DLL and cannot be replaced by linking a symbol of the same \
             name (brisk's CMake build leaves it out there too)"
        );
    }

    let header = read(&root.join("include/brisk.h"));
    let version = version_of(&header);
    // One version: brisk.h's. The crates carry it in their Cargo.toml too
    // (cargo needs it written there), and this keeps the two the same.
    let crate_version = env::var("CARGO_PKG_VERSION").unwrap();
    if crate_version != version {
        panic!(
            "briskalloc-sys {} but include/brisk.h says brisk {}: set `version` in \
             bindings/rust/briskalloc-sys/Cargo.toml and bindings/rust/briskalloc/Cargo.toml to \
             brisk's",
            crate_version, version
        );
    }

    let mut sources = sources_of(&read(&root.join("CMakeLists.txt")));
    if target.windows {
        // CMakeLists.txt: files of Linux's platform layer with no Windows
        // counterpart stay out; cmake/windows.cmake: the Windows files
        // replace the others
        sources.retain(|source| !LINUX_ONLY.contains(&source.as_str()));
        for source in sources.iter_mut() {
            if let Some(rest) = source.strip_prefix("src/platform/linux") {
                *source = format!("src/platform/windows{}", rest);
            }
        }
    }

    let mut build = brisk_build(&root, &target, &version);
    for source in &sources {
        build.file(root.join(source));
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    if override_malloc {
        // malloc & co (CMake's BRISK_OVERRIDE), and operator new / delete,
        // which must be able to unwind into its caller when it throws
        // bad_alloc: CMake gives that one file -fexceptions, and so does this.
        build.define("BRISK_OVERRIDE", "1");
        build.file(root.join("src/api/override.c"));
        let mut new_build = brisk_build(&root, &target, &version);
        new_build.define("BRISK_OVERRIDE", "1");
        new_build.flag("-fexceptions");
        let object = out.join("brisk_override_new.o");
        let status = new_build
            .get_compiler()
            .to_command()
            .arg("-c")
            .arg(root.join("src/api/override_new.c"))
            .arg("-o")
            .arg(&object)
            .status()
            .expect("briskalloc-sys: cannot run the C compiler");
        if !status.success() {
            panic!("briskalloc-sys: compiling src/api/override_new.c failed ({})", status);
        }
        build.object(&object);
        // Linked whole, from its own file rather than bundled in the rlib:
        // nothing in a Rust program refers to brisk's malloc by the time the
        // linker reads this archive (std and the C libraries ask for
        // `malloc` later on its command line), so it would otherwise leave
        // override.o out and every C library would keep glibc's malloc.
        build.cargo_metadata(false);
        build.compile("brisk");
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static:+whole-archive,-bundle=brisk");
    } else {
        build.compile("brisk");
    }
    if target.windows {
        // platform/windows.c's random secret (cmake/windows.cmake links it too)
        println!("cargo:rustc-link-lib=dylib=bcrypt");
    }

    write_stats_struct(&header);
    // for crates that build C against brisk.h (DEP_BRISK_INCLUDE, `links`)
    println!("cargo:include={}", root.join("include").display());
    println!("cargo:version={}", version);

    for path in ["src", "include", "CMakeLists.txt", "cmake/windows.cmake"] {
        let path = root.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

struct Target {
    triple: String,
    windows: bool,
    linux_glibc: bool,
}

impl Target {
    fn from_env() -> Target {
        let var = |name: &str| env::var(name).unwrap_or_default();
        let x86_64 = var("CARGO_CFG_TARGET_ARCH") == "x86_64";
        let (os, target_env) = (var("CARGO_CFG_TARGET_OS"), var("CARGO_CFG_TARGET_ENV"));
        Target {
            triple: var("TARGET"),
            windows: x86_64 && os == "windows" && target_env == "gnu",
            linux_glibc: x86_64 && os == "linux" && target_env == "gnu",
        }
    }

    fn supported(&self) -> bool {
        self.windows || self.linux_glibc
    }
}

/// brisk's folder: the repository's, or the copy in c_src/.
fn source_root(manifest: &Path) -> PathBuf {
    let repository = manifest.join("../../..");
    let vendored = manifest.join("c_src");
    for root in [&repository, &vendored] {
        if root.join("include/brisk.h").is_file() && root.join("src/api/malloc.c").is_file() {
            return root.canonicalize().unwrap_or_else(|_| root.clone());
        }
    }
    panic!(
        "briskalloc-sys: brisk's C sources are missing: neither {} (the brisk repository) nor {} \
         (a packaged crate) holds include/brisk.h and src/. In the repository, run \
         bindings/rust/vendor.sh before `cargo package`.",
        repository.display(),
        vendored.display()
    );
}

fn read(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("briskalloc-sys: cannot read {}: {}", path.display(), e))
}

/// "major.minor.patch" from the BRISK_VERSION_* macros of brisk.h.
fn version_of(header: &str) -> String {
    let part = |name: &str| -> String {
        let prefix = format!("#define BRISK_VERSION_{} ", name);
        header
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
            .unwrap_or_else(|| panic!("briskalloc-sys: brisk.h has no BRISK_VERSION_{}", name))
    };
    format!("{}.{}.{}", part("MAJOR"), part("MINOR"), part("PATCH"))
}

/// The list `set(BRISK_SOURCES ...)` of CMakeLists.txt: the one list of
/// brisk's sources, so a file added there is built here too. The malloc
/// overrides are not in it (CMake appends them when BRISK_OVERRIDE is on).
fn sources_of(cmake: &str) -> Vec<String> {
    let start = cmake
        .find("set(BRISK_SOURCES")
        .expect("briskalloc-sys: CMakeLists.txt has no set(BRISK_SOURCES ...)");
    let body = &cmake[start + "set(BRISK_SOURCES".len()..];
    let end = body.find(')').expect("briskalloc-sys: set(BRISK_SOURCES ... has no ')'");
    let sources: Vec<String> = body[..end]
        .split_whitespace()
        .filter(|word| !word.starts_with('#'))
        .map(str::to_string)
        .collect();
    if sources.is_empty() || sources.iter().any(|s| !s.starts_with("src/") || !s.ends_with(".c")) {
        panic!("briskalloc-sys: cannot read BRISK_SOURCES in CMakeLists.txt: {:?}", sources);
    }
    sources
}

/// A cc::Build with brisk_objects' defines and flags (CMakeLists.txt).
fn brisk_build(root: &Path, target: &Target, version: &str) -> cc::Build {
    let mut build = cc::Build::new();
    build.include(root.join("include"));
    build.define("_GNU_SOURCE", None);
    build.define("BRISK_VERSION_STRING", format!("\"{}\"", version).as_str());
    if env::var_os("CARGO_FEATURE_DEBUG").is_some() {
        build.define("BRISK_DEBUG", "1"); // internal assertions (slow)
    }
    // An allocator slows every program down when built without optimisation;
    // cargo's dev profile would give -O0. Debugging brisk itself is what the
    // `debug` feature's assertions are for.
    build.opt_level(3);
    build.define("NDEBUG", None);
    build.flag("-std=c11");
    for flag in [
        // only the brisk_* API leaves the objects (brisk.h marks it)
        "-fvisibility=hidden",
        // brisk's thread-locals on the fast path: one load, no __tls_get_addr
        "-ftls-model=initial-exec",
        // the compiler must not turn brisk's own malloc/free code into calls to itself
        "-fno-builtin-malloc",
        "-fno-builtin-free",
        "-fno-builtin-calloc",
        "-fno-builtin-realloc",
        "-fno-semantic-interposition",
        // brisk_objects' warnings, without -Werror: a newer compiler's new
        // warning must not break a user's build (the rust stage adds -Werror)
        "-Wshadow",
        "-Wstrict-prototypes",
        "-Wmissing-prototypes",
        "-Wno-unused-parameter",
    ] {
        build.flag(flag);
    }
    if target.windows {
        // cmake/windows.cmake: the static library's objects (no dllimport),
        // and brisk's own data addressed directly rather than through .refptr
        build.define("BRISK_STATIC", None);
        build.flag("-mcmodel=small");
    }
    build
}

/// Writes OUT_DIR/stats.rs: `struct brisk_stats` in Rust, field by field
/// from brisk.h's BRISK_STATS_FIELDS list, so that the two cannot drift
/// apart when brisk adds a statistic.
fn write_stats_struct(header: &str) {
    let fields_at = header
        .find("#define BRISK_STATS_FIELDS(X)")
        .expect("briskalloc-sys: brisk.h has no BRISK_STATS_FIELDS");
    let mut fields = Vec::new();
    for line in header[fields_at..].lines().skip(1) {
        let line = line.trim().trim_end_matches('\\').trim();
        let entry = match line.strip_prefix("X(") {
            Some(entry) => entry,
            None => break,
        };
        let (name, meaning) = entry
            .split_once(',')
            .unwrap_or_else(|| panic!("briskalloc-sys: cannot read {:?} in brisk.h", line));
        let meaning = meaning.trim().trim_end_matches(')').trim().trim_matches('"');
        fields.push((name.trim().to_string(), meaning.to_string()));
    }
    let classes: usize = header
        .lines()
        .find_map(|line| line.strip_prefix("#define BRISK_STATS_CLASSES "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("briskalloc-sys: brisk.h has no BRISK_STATS_CLASSES");
    if fields.is_empty() {
        panic!("briskalloc-sys: BRISK_STATS_FIELDS in brisk.h lists no field");
    }

    let mut out = String::new();
    out.push_str("// SPDX-License-Identifier: MIT\n");
    out.push_str("// Written by briskalloc-sys's build.rs from brisk.h's BRISK_STATS_FIELDS.\n\n");
    writeln!(out, "/// Size classes in [`brisk_stats`] (`BRISK_STATS_CLASSES`).").unwrap();
    writeln!(out, "pub const BRISK_STATS_CLASSES: usize = {};\n", classes).unwrap();
    out.push_str("/// `struct brisk_stats` of brisk.h: fill it with [`brisk_stats_get`].\n");
    out.push_str("#[repr(C)]\n#[derive(Clone, Copy, Debug)]\npub struct brisk_stats {\n");
    out.push_str("    /// Set by the caller to `size_of::<brisk_stats>()`.\n");
    out.push_str("    pub struct_size: usize,\n");
    for (name, meaning) in &fields {
        writeln!(out, "    /// {}", meaning).unwrap();
        writeln!(out, "    pub {}: u64,", name).unwrap();
    }
    out.push_str("    /// Largest block of each class; 0 for the last: blocks above 512 KiB.\n");
    out.push_str("    pub class_size: [u64; BRISK_STATS_CLASSES],\n");
    out.push_str("    /// Blocks allocated, per class (counted only in diagnostic modes).\n");
    out.push_str("    pub class_mallocs: [u64; BRISK_STATS_CLASSES],\n");
    out.push_str("    /// Blocks freed, per class (counted only in diagnostic modes).\n");
    out.push_str("    pub class_frees: [u64; BRISK_STATS_CLASSES],\n}\n\n");
    out.push_str("impl brisk_stats {\n");
    out.push_str("    /// All zero, with `struct_size` set: ready for [`brisk_stats_get`].\n");
    out.push_str("    pub const fn new() -> brisk_stats {\n        brisk_stats {\n");
    out.push_str("            struct_size: core::mem::size_of::<brisk_stats>(),\n");
    for (name, _) in &fields {
        writeln!(out, "            {}: 0,", name).unwrap();
    }
    out.push_str("            class_size: [0; BRISK_STATS_CLASSES],\n");
    out.push_str("            class_mallocs: [0; BRISK_STATS_CLASSES],\n");
    out.push_str("            class_frees: [0; BRISK_STATS_CLASSES],\n        }\n    }\n}\n");
    let names: Vec<String> = fields.iter().map(|(name, _)| format!("{:?}", name)).collect();
    out.push_str("\n/// The names of the scalar fields of [`brisk_stats`], in order.\n");
    writeln!(out, "pub const BRISK_STATS_FIELD_NAMES: &[&str] = &[{}];", names.join(", ")).unwrap();

    let path = PathBuf::from(env::var("OUT_DIR").unwrap()).join("stats.rs");
    fs::write(&path, out)
        .unwrap_or_else(|e| panic!("briskalloc-sys: cannot write {}: {}", path.display(), e));
}
