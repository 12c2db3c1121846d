//! `axe-mcp`: see `axe::commands`; the command runs in `axe` (`axe_launch`).
#![cfg_attr(not(test), no_main)]
axe_launch::launcher!(c"axe-mcp");
