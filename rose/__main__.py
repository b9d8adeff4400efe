from rose._entry import main

main()
