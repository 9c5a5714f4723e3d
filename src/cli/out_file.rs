//! Writing an `-o FILE` output: through symlinks to their target; over a
//! regular file or to a new path atomically (temporary file beside it,
//! flushed, renamed over it, the old file's mode kept); straight into a
//! FIFO, a device or any other special file, which is never replaced.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ptc_lisp::history::archive::write_atomically_with;

/// Symlinks followed before giving up (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

/// Write `bytes` to `path` as described in the module documentation. On
/// an error a regular file is left as it was (no partial output).
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_file() => {
            write_atomically_with(&target, bytes, Some(meta.permissions()))
        }
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
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            write_atomically_with(&target, bytes, None)
        }
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
