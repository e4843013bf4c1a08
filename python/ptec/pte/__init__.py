"""The .pte program format: dataclasses, reader, writer, program builder."""
from .schema import *  # noqa: F401,F403
from .reader import PteError, parse_program, read_header, read_program  # noqa: F401
from .writer import serialize_program, write_program  # noqa: F401
