//! The keeper's and the guard's own names (`super`): what `ps`, `pkill` and `killall` see of them, so that a kill by
//! nvcc's name reaches neither.

/// Give K (or G) its own name: the command name through `prctl`, and the command line by writing the name over the
/// arguments it has from W (the memory `/proc/self/cmdline` shows, between `arg_start` and `arg_end` of
/// `/proc/self/stat`), cut to fit, the rest zeros. Neither reads an argument after the fork: W's own copy is untouched.
pub(super) fn name_process(name: &str) {
    let name = name.as_bytes();
    // The kernel keeps 15 bytes of it.
    if let Ok(comm) = std::ffi::CString::new(&name[..name.len().min(15)]) {
        let _ = nix::sys::prctl::set_name(&comm);
    }
    let Some((start, end)) = std::fs::read("/proc/self/stat").ok().and_then(|stat| arguments_in_stat(&stat)) else {
        return;
    };
    let Some(len) = end.checked_sub(start).filter(|&len| len > 0) else { return };
    // SAFETY: [arg_start, arg_end) is this process's own argument strings, on the stack the kernel laid out at exec,
    // writable and never moved; nothing in K reads them after the fork (Rust's `std::env::args` is W's).
    unsafe {
        let at = start as *mut u8;
        std::ptr::write_bytes(at, 0, len);
        std::ptr::copy_nonoverlapping(name.as_ptr(), at, name.len().min(len - 1));
    }
}

/// Where a process's arguments lie in its memory (`arg_start`, `arg_end`: fields 48 and 49 of `/proc/PID/stat`,
/// counted from the pid; the command name before them may hold anything).
fn arguments_in_stat(stat: &[u8]) -> Option<(usize, usize)> {
    let mut fields = crate::exec::procfs::fields_of(stat)?.skip(45);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_place_is_read_after_the_command_name() {
        // Fields 3 to 47 as a kernel writes them, then arg_start and arg_end, then two more.
        let middle: String = (3..48).map(|n| format!("{n} ")).collect();
        let stat = format!("42 (a) b) {middle}140737000 140737100 140737200 140737300");
        assert_eq!(arguments_in_stat(stat.as_bytes()), Some((140737000, 140737100)));
        assert_eq!(arguments_in_stat(b"42 (cc1plus) S 41 42"), None);
        let own = std::fs::read("/proc/self/stat").unwrap();
        let (start, end) = arguments_in_stat(&own).unwrap();
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
        assert_eq!(end - start, cmdline.len(), "/proc/self/stat's arguments are not /proc/self/cmdline's");
    }
}
