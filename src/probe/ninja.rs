//! The version of a Ninja, for `nvcc-wrapper jobserver`: Ninja takes part in a jobserver only from 1.13 on.

use std::path::Path;

/// The major and minor version `ninja --version` prints (`1.11.1`, PyPI's `1.13.0.git.kitware.jobserver-pipe-1`);
/// `None` when it cannot be run or says something else.
pub fn version(program: &Path) -> Option<(u32, u32)> {
    parse(&super::run(program, &["--version"]).ok()?)
}

fn parse(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_as_ninjas_print_them() {
        assert_eq!(super::parse("1.11.1\n"), Some((1, 11)));
        assert_eq!(super::parse("1.13.0.git.kitware.jobserver-pipe-1\n"), Some((1, 13)));
        assert_eq!(super::parse("1.10.2.git\n"), Some((1, 10)));
        assert_eq!(super::parse("samurai 1.2\n"), None);
        assert_eq!(super::parse(""), None);
    }
}
