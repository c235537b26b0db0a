from dream.cli import main

main()
