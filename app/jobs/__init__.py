"""The GUI's job process, in the core: `server` answers compile, verify and bench requests on
JSON lines; `messages` defines every request and event that crosses that pipe."""
