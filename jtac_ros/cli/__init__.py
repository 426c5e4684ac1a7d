"""jtac: the command line of the joint trajectory admittance controller (the wheels have no ``ros2`` CLI).

Subcommands (``jtac <command> --help`` for the options)::

    jtac run [--params-file F] [--node NAME] [-- NODE_ARGS...]   start the controller node
    jtac send-goal FILE.yaml [--moveit] [--timeout S]         execute a goal file, show progress
    jtac cancel [--moveit]                                    cancel every goal of the node's action
    jtac tare FRAME                                           zero the F/T sensor of FRAME
    jtac time-scale [PERCENT]                                 set (or show) time_scale_percentage
    jtac gripper move W [--speed] | grasp W [--force --speed --epsilon-inner --epsilon-outer]
                 | home | stop | state                        the Franka Hand (parameter hand)
    jtac record start [--path P] [--per-goal] | stop           the node records to .mcap (a file per
                                                              session, or per goal)
    jtac state [--count N]                                    echo the controller state
    jtac echo TOPIC [--count N]                               print a topic's messages (controller_state,
                                                              joint_states, wrench/<frame>/raw, ...)
    jtac param list [PREFIX] | get NAME... | set NAME VALUE   the node's parameters
    jtac lifecycle get | set TRANSITION                       the node's lifecycle state, a transition
    jtac list-controllers [--verbose]                         the controller, its type and state
    jtac switch [--activate NAME] [--deactivate NAME]         activate / deactivate the controller
    jtac demo [--out DIR] [--lockstep] [--no-plots]           the simulated FR3 pushed while it follows a
                                                              trajectory with admittance (make demo's job)
    jtac plot RECORD.npz|.mcap [--out DIR]                    write the four plots of a recording
    jtac convert IN OUT                                       a recording .npz <-> .mcap (ROS 2 schemas)
    jtac plot-admittance --mass M --stiffness K [--damping D] [--rate HZ] [--out FILE]
                                                              check an admittance set at a rate and plot
                                                              its continuous vs discrete step response
    jtac doctor [--robot-ip IP] [--seconds S] [--json]        can this machine hold the 1 kHz loop?

Every command that talks to the node takes ``--node NAME`` (default
``joint_trajectory_admittance_controller``) and ``--wait S``, how long to wait for the node's action,
service or topic to be discovered. Goal files are described in jtac_ros/goal_file.py.

``jtac demo``, ``jtac plot``, ``jtac convert``, ``jtac plot-admittance`` and ``jtac doctor`` need no node
and no ROS: they live in jtac_py.cli and run where no ROS 2 is installed; a ROS verb there says that it
needs ROS 2 and how to get it (exit 2). ``jtac plot-admittance`` runs goal intake's stability check
(jtac_py.admittance, docs/admittance.md), prints one line per axis and exits 1 when goal intake would
reject the set.

``jtac doctor`` (jtac_py/doctor/, docs/doctor.md) checks the kernel,
scheduling limits, CPUs and the route to the robot, measures wake-up lateness, and names the fix of
every line that is not ok.

Exit status: 0 done (goal SUCCESSFUL; doctor: no line failed); 1 the goal failed or the node refused the
request (doctor: a line failed); 2 bad usage, a bad file or value, no node, or no ROS 2 for a ROS
verb; 130 interrupted (Ctrl-C; send-goal cancels its goal first).

One module per verb (jtac_ros/cli/<verb>.py: its sub-parser and its handler); app.py collects them with
the ROS-free verbs of jtac_py.cli; session.py is the rclpy session they share.
"""

from jtac_ros.cli.app import build_parser, main
from jtac_ros.cli.options import DEFAULT_NODE

__all__ = ["DEFAULT_NODE", "build_parser", "main"]
