"""The kernel spec (docs/spec.md): its model and parser, writing and editing its TOML, the limits
that keep a crafted file cheap, cases, inits, expressions and dtypes, and the Qt-free half of the
Spec pane's form. Imports only app.base.
"""

__all__ = ["cases", "dtypes", "edit", "expr", "files", "form", "inits", "limits", "model",
           "writing"]
