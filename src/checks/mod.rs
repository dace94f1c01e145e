//! What keeps the source and the docs honest, in tests only: the module graph read from the source (`layering`), and
//! the reference pages, the man page and makeNvccWrapper's answers made from the code's own tables (`reference`).

pub(crate) mod layering;
mod reference;
