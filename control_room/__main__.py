from control_room.cli import main

main()
