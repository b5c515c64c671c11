"""The Spec pane: a form over the kernel's TOML spec, validated and saved keeping its layout."""
