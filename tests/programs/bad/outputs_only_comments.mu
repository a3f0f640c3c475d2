# nothing here
   # but comments

