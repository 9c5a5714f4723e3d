//! Writing an `-o FILE` output: through symlinks to their target; over a
//! regular file or to a new path atomically (temporary file beside it,
//! flushed, renamed over it, the old file's mode kept); straight into a
//! FIFO, a device or any other special file, which is never replaced.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Symlinks followed before giving up (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

/// Write `bytes` to `path` as described in the module documentation. On
/// an error a regular file is left as it was (no partial output).
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_file() => write_atomically(&target, bytes, Some(meta.permissions())),
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        // A FIFO, a character or block device, a socket: write into it.
        Ok(_) => {
            let mut f = OpenOptions::new().write(true).open(&target)?;
            f.write_all(bytes)?;
            f.flush()
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_atomically(&target, bytes, None),
        Err(e) => Err(e),
    }
}

/// The path a chain of symlinks ends at (which may not exist yet).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Write to a temporary file beside `path`, flush it to disk, give it
/// `permissions` (the replaced file's), then rename it over `path`:
/// readers see the old file or the whole new one.
fn write_atomically(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        drop(f);
        std::fs::rename(&tmp, path)?;
        // The rename is durable once the directory is synced (best effort).
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
