//! Where two builds of one file first differ, in the terms of the file: the ELF section (objects, programs, cubins),
//! the archive member and whether its header or its contents (`-lib` archives, and the section inside a member), or
//! the byte. Pure: it reads only the bytes it is given. `check-reproducible` speaks with it.

use std::fmt;

/// The first difference of two files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The byte offset of the first differing byte (the shorter file's length when one is a prefix of the other).
    pub offset: usize,
    /// Where that byte is, in the first file's terms.
    pub place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In this ELF section.
    Section(String),
    /// In the ELF file's own headers (the ELF header, the program or the section headers).
    ElfHeaders,
    /// In an archive member: its header (date, owner, mode, size) or its contents, and there the section.
    Member { name: String, header: bool, section: Option<String> },
    /// Nowhere the wrapper can name.
    Bytes,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Place::Section(name) => write!(f, "in ELF section {name} (byte {})", self.offset),
            Place::ElfHeaders => write!(f, "in the ELF headers (byte {})", self.offset),
            Place::Member { name, header: true, .. } => {
                write!(
                    f,
                    "in the header of archive member {name} (its date, owner, mode or size; byte {})",
                    self.offset
                )
            }
            Place::Member { name, section: Some(section), .. } => {
                write!(f, "in archive member {name}, ELF section {section} (byte {})", self.offset)
            }
            Place::Member { name, .. } => write!(f, "in archive member {name} (byte {})", self.offset),
            Place::Bytes => write!(f, "at byte {}", self.offset),
        }
    }
}

/// Where `a` and `b` first differ; `None` when they are the same bytes.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<Difference> {
    let offset =
        a.iter().zip(b).position(|(x, y)| x != y).or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))?;
    let place = if a.starts_with(b"\x7fELF") {
        elf_place(a, offset).unwrap_or(Place::Bytes)
    } else if a.starts_with(AR_MAGIC) {
        member_place(a, offset).unwrap_or(Place::Bytes)
    } else {
        Place::Bytes
    };
    Some(Difference { offset, place })
}

const AR_MAGIC: &[u8] = b"!<arch>\n";

fn u16_at(data: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn u32_at(data: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?) as usize)
}

fn u64_at(data: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The section of a 64-bit little-endian ELF file (every file nvcc writes on the platforms it builds for) that holds
/// byte `offset`; `None` for a file it cannot read.
fn elf_place(data: &[u8], offset: usize) -> Option<Place> {
    const SHT_NOBITS: usize = 8;
    if data.get(4) != Some(&2) || data.get(5) != Some(&1) {
        return None;
    }
    let (table, entry, count, names) =
        (u64_at(data, 0x28)?, u16_at(data, 0x3a)?, u16_at(data, 0x3c)?, u16_at(data, 0x3e)?);
    let header = |i: usize| table.checked_add(i.checked_mul(entry)?);
    let field = |i: usize, at: usize, width: fn(&[u8], usize) -> Option<usize>| width(data, header(i)? + at);
    let names_at = field(names, 0x18, u64_at)?;
    for i in 0..count {
        let (start, size) = (field(i, 0x18, u64_at)?, field(i, 0x20, u64_at)?);
        if field(i, 4, u32_at)? != SHT_NOBITS && (start..start.saturating_add(size)).contains(&offset) {
            let name_at = names_at.checked_add(field(i, 0, u32_at)?)?;
            let name = data.get(name_at..)?.split(|b| *b == 0).next()?;
            return Some(Place::Section(String::from_utf8_lossy(name).into_owned()));
        }
    }
    Some(Place::ElfHeaders)
}

/// The member of a Unix `ar` archive that holds byte `offset`, and where in it.
fn member_place(data: &[u8], offset: usize) -> Option<Place> {
    let mut at = AR_MAGIC.len();
    while at + 60 <= data.len() {
        let header = &data[at..at + 60];
        let name = String::from_utf8_lossy(&header[..16]).trim_end().trim_end_matches('/').to_string();
        let size: usize = std::str::from_utf8(&header[48..58]).ok()?.trim().parse().ok()?;
        let body = at + 60;
        if offset < body {
            return Some(Place::Member { name, header: true, section: None });
        }
        if offset < body + size {
            let contents = data.get(body..body + size)?;
            let section = contents.starts_with(b"\x7fELF").then(|| elf_place(contents, offset - body)).flatten();
            let section = match section {
                Some(Place::Section(s)) => Some(s),
                Some(Place::ElfHeaders) => Some("headers".to_string()),
                _ => None,
            };
            return Some(Place::Member { name, header: false, section });
        }
        at = body + size + size % 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 file: the header, a .text and a .data section and the section-name table.
    fn elf(text: &[u8], data: &[u8]) -> Vec<u8> {
        let names = b"\0.text\0.data\0.shstrtab\0";
        let mut file = vec![0u8; 64];
        file[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let text_at = file.len();
        file.extend_from_slice(text);
        let data_at = file.len();
        file.extend_from_slice(data);
        let names_at = file.len();
        file.extend_from_slice(names);
        let table = file.len();
        let mut section = |name: u32, kind: u32, at: usize, size: usize| {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(at as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            file.extend_from_slice(&h);
        };
        section(0, 0, 0, 0);
        section(1, 1, text_at, text.len());
        section(7, 1, data_at, data.len());
        section(13, 3, names_at, names.len());
        file[0x28..0x30].copy_from_slice(&(table as u64).to_le_bytes());
        file[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        file[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes());
        file[0x3e..0x40].copy_from_slice(&3u16.to_le_bytes());
        file
    }

    fn archive(members: &[(&str, &str, &[u8])]) -> Vec<u8> {
        let mut file = AR_MAGIC.to_vec();
        for (name, date, contents) in members {
            file.extend_from_slice(
                format!("{:<16}{date:<12}{:<6}{:<6}{:<8}{:<10}`\n", format!("{name}/"), 0, 0, 644, contents.len())
                    .as_bytes(),
            );
            file.extend_from_slice(contents);
            if contents.len() % 2 == 1 {
                file.push(b'\n');
            }
        }
        file
    }

    #[test]
    fn the_same_bytes_have_no_difference() {
        let a = elf(b"code", b"data");
        assert_eq!(first_difference(&a, &a.clone()), None);
        assert_eq!(first_difference(b"", b""), None);
    }

    #[test]
    fn an_elf_difference_is_named_by_its_section() {
        let a = elf(b"code", b"tmpxft_0001");
        let b = elf(b"code", b"tmpxft_0002");
        let d = first_difference(&a, &b).unwrap();
        assert_eq!(d.place, Place::Section(".data".into()));
        assert_eq!(d.offset, 64 + 4 + 10);
        assert_eq!(d.to_string(), "in ELF section .data (byte 78)");
        let c = elf(b"CODE", b"tmpxft_0001");
        assert_eq!(first_difference(&a, &c).unwrap().place, Place::Section(".text".into()));
        // In the ELF header itself.
        let mut d = a.clone();
        d[20] = 9;
        assert_eq!(first_difference(&a, &d).unwrap().place, Place::ElfHeaders);
    }

    #[test]
    fn an_archive_difference_is_named_by_member_header_or_section() {
        let a = archive(&[("one.o", "0", b"same"), ("two.o", "0", &elf(b"x", b"y"))]);
        let dated = archive(&[("one.o", "1764000000", b"same"), ("two.o", "0", &elf(b"x", b"y"))]);
        assert_eq!(
            first_difference(&a, &dated).unwrap().place,
            Place::Member { name: "one.o".into(), header: true, section: None }
        );
        let other = archive(&[("one.o", "0", b"same"), ("two.o", "0", &elf(b"x", b"z"))]);
        let d = first_difference(&a, &other).unwrap();
        assert_eq!(d.place, Place::Member { name: "two.o".into(), header: false, section: Some(".data".into()) });
        assert!(d.to_string().starts_with("in archive member two.o, ELF section .data"), "{d}");
    }

    #[test]
    fn other_files_and_lengths_are_named_by_byte() {
        assert_eq!(first_difference(b"abc", b"abd"), Some(Difference { offset: 2, place: Place::Bytes }));
        assert_eq!(first_difference(b"abc", b"abcd").unwrap().offset, 3);
        // A broken ELF file is still compared, by byte.
        assert_eq!(first_difference(b"\x7fELF\x02\x01xx", b"\x7fELF\x02\x01xy").unwrap().place, Place::Bytes);
    }
}
