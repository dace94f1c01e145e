//! Signals, for every process of the wrapper's (W, its keeper K and guard G; see `super::child`): the ones W passes
//! on, the ones it ignores for its own writes and gives nvcc back as the caller left them, with the standard streams
//! the caller closed, and the sets, masks and actions they work with. Through `nix`; `unsafe` only where the call can
//! install a handler or reads a process-wide table no safe call reads.

use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

/// Signals whose default action would end the wrapper for a write of its own (its debug log, an error line): SIGPIPE
/// (a pipe whose reader left: `... 2>&1 | head -1`) and SIGXFSZ (a file past the size limit, `ulimit -f`). The wrapper,
/// its keeper and its guard ignore both, so that such a write fails and is dropped (`set_up_process`, before `main`);
/// nvcc gets them as the caller left them.
pub const OWN_WRITES: [Signal; 2] = [Signal::SIGPIPE, Signal::SIGXFSZ];

/// Signals a caller sends to stop or poke a compiler (make and ninja on an interrupt, a CI's timeout, `kill`): sent to
/// the wrapper, they reach nvcc (`super::child`). Each ends a process by default.
pub const FORWARDED: [Signal; 6] =
    [Signal::SIGHUP, Signal::SIGINT, Signal::SIGQUIT, Signal::SIGTERM, Signal::SIGUSR1, Signal::SIGUSR2];

/// Which of `OWN_WRITES` the caller started the wrapper with ignored (bit N: `OWN_WRITES[N]`), recorded before
/// `set_up_process` ignores them, so that nvcc gets them as the caller left them (`Spawn`'s exec and spawns), not as
/// the wrapper needs them.
static CALLER_IGNORES: AtomicU8 = AtomicU8::new(0);

/// Which of the standard streams (bit 0: stdin, 1: stdout, 2: stderr) the caller left closed. `set_up_process` opens
/// `/dev/null` in their place before `main`, so that the wrapper's own writes go nowhere harmful; nvcc gets them
/// closed again, as exec from the caller would give them (`nvcc -x cu - <&-` then fails as it does alone, instead of
/// compiling an empty source).
static CALLER_CLOSED_STREAMS: AtomicU8 = AtomicU8::new(0);

/// Set the process up before `main`, as the binary's constructor (see `main.rs`; the binary has no Rust runtime to do
/// it): first record what the caller left that the wrapper changes for its own sake, the dispositions of `OWN_WRITES`
/// and the closed standard streams; then ignore `OWN_WRITES`, and open `/dev/null` in place of each closed stream, so
/// that no file the wrapper opens takes its number (and the wrapper's writes to it go nowhere harmful). Without a
/// `/dev/null` to open, the process aborts, as Rust's runtime does.
pub extern "C" fn set_up_process() {
    // One call a signal: the action set returns the caller's.
    let ignored = OWN_WRITES.iter().enumerate().fold(0u8, |bits, (n, &signal)| {
        let Saved(caller) = set(signal, Action::Ignore);
        bits | u8::from(caller.handler() == SigHandler::SigIgn) << n
    });
    // One call for the three streams: poll marks a descriptor that is not open POLLNVAL. Where poll fails (a limit
    // on open files below 3), a call a stream: fcntl(F_GETFD) fails on one that is not open.
    let mut streams = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: poll writes only the `revents` of the three entries of the array it is given, and returns at once;
    // fcntl(F_GETFD) reads no memory.
    let closed = unsafe {
        match libc::poll(streams.as_mut_ptr(), 3, 0) {
            -1 => {
                streams.iter().filter(|p| libc::fcntl(p.fd, libc::F_GETFD) == -1).fold(0u8, |bits, p| bits | 1 << p.fd)
            }
            _ => streams.iter().filter(|p| p.revents & libc::POLLNVAL != 0).fold(0u8, |bits, p| bits | 1 << p.fd),
        }
    };
    if !cover_closed_streams(closed) {
        std::process::abort();
    }
    CALLER_IGNORES.store(ignored, Ordering::Relaxed);
    CALLER_CLOSED_STREAMS.store(closed, Ordering::Relaxed);
}

/// Open `/dev/null` in place of each standard stream closed (bit N: descriptor N), so that no file the wrapper opens
/// takes its number; whether every one was.
pub fn cover_closed_streams(closed: u8) -> bool {
    // Each open takes the lowest number free: the closed streams', in order.
    (0..3).filter(|fd| closed & 1 << fd != 0).all(|_| {
        let null = nix::fcntl::open("/dev/null", nix::fcntl::OFlag::O_RDWR, nix::sys::stat::Mode::empty());
        null.map(std::os::fd::IntoRawFd::into_raw_fd).is_ok()
    })
}

/// What exec gives nvcc that the wrapper changed in itself: which of `OWN_WRITES` the caller ignored (bit N), and
/// which standard streams it left closed (bit N: descriptor N).
pub fn caller_state() -> (u8, u8) {
    (CALLER_IGNORES.load(Ordering::Relaxed), CALLER_CLOSED_STREAMS.load(Ordering::Relaxed))
}

/// The signals of `OWN_WRITES` that the caller left at their default action: nvcc gets them so.
pub fn callers_defaults() -> SigSet {
    let (ignored, _) = caller_state();
    set_of(OWN_WRITES.into_iter().enumerate().filter(|(n, _)| ignored & 1 << n == 0).map(|(_, signal)| signal))
}

/// A set of signals.
pub fn set_of(signals: impl IntoIterator<Item = Signal>) -> SigSet {
    let mut set = SigSet::empty();
    signals.into_iter().for_each(|signal| set.add(signal));
    set
}

/// Change this thread's signal mask (`how` with `set`); the mask before. The wrapper's processes run one thread.
pub fn mask(how: SigmaskHow, set: &SigSet) -> SigSet {
    let mut old = SigSet::empty();
    // Fails only for an invalid `how`, which these are not.
    let _ = nix::sys::signal::pthread_sigmask(how, Some(set), Some(&mut old));
    old
}

/// Whether `signal` is ignored.
pub fn is_ignored(signal: Signal) -> bool {
    // SAFETY: with a null new action, sigaction only reads the current one into `old`, which it may fully write; nix
    // has no call that reads an action without setting one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal as libc::c_int, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The keeper's pid, for W's handler (0: none).
static KEEPER: AtomicI32 = AtomicI32::new(0);

/// W's handler of `FORWARDED`: pass what was sent to W alone on to the keeper. W shares nvcc's group (see
/// `super::child`): a SIGINT or SIGQUIT is heard, not passed on, and neither is one a terminal sent (`SI_KERNEL`),
/// which reached nvcc already.
extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let keeper = KEEPER.load(Ordering::SeqCst);
    if signal == libc::SIGINT || signal == libc::SIGQUIT || keeper <= 0 {
        return;
    }
    // SAFETY: the kernel hands an SA_SIGINFO handler a valid siginfo.
    if unsafe { (*info).si_code } != libc::SI_KERNEL {
        // kill is async-signal-safe; so are the atomic's load and this conversion.
        let _ = Signal::try_from(signal).map(|signal| nix::sys::signal::kill(Pid::from_raw(keeper), signal));
    }
}

/// Where `forward` sends what it passes on: the keeper's pid, or `None` once there is none.
pub fn pass_to(keeper: Option<Pid>) {
    KEEPER.store(keeper.map_or(0, Pid::as_raw), Ordering::SeqCst);
}

/// What a signal can be set to do here: each runs no code of the wrapper's, or only `forward`.
pub enum Action {
    /// Its default action.
    Default,
    Ignore,
    /// W passes it on to the keeper (`forward`, `pass_to`), restarting the calls it interrupts.
    PassOn,
    /// What it did before an earlier `set`.
    Back(Saved),
}

/// The action a signal had before `set` replaced it, to be put back.
pub struct Saved(SigAction);

/// Set what `signal` does; what it did before.
pub fn set(signal: Signal, action: Action) -> Saved {
    let plain = |handler| SigAction::new(handler, SaFlags::empty(), SigSet::empty());
    let action = match action {
        Action::Default => plain(SigHandler::SigDfl),
        Action::Ignore => plain(SigHandler::SigIgn),
        Action::PassOn => {
            SigAction::new(SigHandler::SigAction(forward), SaFlags::SA_SIGINFO | SaFlags::SA_RESTART, SigSet::empty())
        }
        Action::Back(Saved(old)) => old,
    };
    // SAFETY: a handler installed here is `forward`, which reads an atomic and calls kill (both async-signal-safe), or
    // one this process had before (its own `forward`, or the caller's SIG_DFL or SIG_IGN); SIG_DFL and SIG_IGN run no
    // code of ours. sigaction fails only for a signal it cannot change, which these are not.
    let old = unsafe { nix::sys::signal::sigaction(signal, &action) };
    Saved(old.unwrap_or_else(|_| plain(SigHandler::SigDfl)))
}

/// End this process by `signal`, as nvcc ended: its default action restored and unblocked, and no core file of the
/// wrapper's own written (nvcc's, if it wrote one, is the one that counts).
pub fn die_by(signal: libc::c_int) -> ! {
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    // SAFETY: SIG_DFL runs no code of ours; the set is a local that sigemptyset initialises; raise signals this
    // thread. Raw, as nix's signals stop at 31 and nvcc may end by a real-time one.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    // A signal whose default is to go on (SIGCHLD, SIGWINCH): end as a shell reports one.
    std::process::exit(128 + signal)
}

/// Let a signal held back while nvcc ran (one of `FORWARDED`) end the wrapper by its default action, now.
pub fn let_held_through() {
    mask(SigmaskHow::SIG_UNBLOCK, &set_of(FORWARDED));
}
