from failres.cli import main

main()
