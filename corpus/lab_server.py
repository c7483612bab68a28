"""The lab's own server, course 000's way: an mcp_min.MCPServer with add_tool registrations (explicit input
schemas), served over stdio; the report card's tests hold it to every rule of course 000.

    python corpus/lab_server.py
    python report_card.py --level 000 --not-allowed delete_db --raises 'divide {"x": 1, "y": 0}' \\
                          --handler-fails 'resources/read {"uri": "lab://unreadable"}' \\
                          --change-tools enable_subtract -- python corpus/lab_server.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # mcp_min.py is one folder up

from mcp_min import MCPServer
from mcp_stdio import serve_stdio

TWO_NUMBERS = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
               "required": ["x", "y"]}
FLAGS = ["--not-allowed", "delete_db", "--raises", 'divide {"x": 1, "y": 0}',
         "--handler-fails", 'resources/read {"uri": "lab://unreadable"}', "--change-tools", "enable_subtract"]

server = MCPServer("lab", allowed_tools={"add", "divide", "enable_subtract", "subtract"})


def add(x, y):
    return x + y


def divide(x, y):
    return x / y  # y = 0 raises: the fourth rung of the lattice, an isError result


def delete_db():
    return "deleted"  # never runs: not in the allow-list


def unreadable():
    raise OSError("the disk is gone")  # a handler's bug, not a tool's: the lab answers -32603 and lives on


def enable_subtract():
    server.add_tool("subtract", lambda x, y: x - y, "Subtract y from x.", TWO_NUMBERS, notify=True, replace=True)
    return "subtract is now available"


server.add_tool("add", add, "Add two numbers.", TWO_NUMBERS)
server.add_tool("divide", divide, "Divide x by y.", TWO_NUMBERS)
server.add_tool("delete_db", delete_db, "Delete the database (pretend).")
server.add_tool("enable_subtract", enable_subtract, "Offer subtract from now on.")
server.add_resource("lab://readme", "Course 000's lab, on stdio.", name="readme")
server.add_resource("lab://unreadable", unreadable, name="unreadable")

if __name__ == "__main__":
    serve_stdio(server)
