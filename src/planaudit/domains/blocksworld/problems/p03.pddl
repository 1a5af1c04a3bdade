;; Reverse a four-block tower: the whole tower must be dismantled
;; and rebuilt upside down.
;; Initial towers (top -> bottom): a b c d
(define (problem blocksworld-p03)
  (:domain blocksworld)
  (:objects a b c d - block)
  (:init
    (clear a)
    (on a b)
    (on b c)
    (on c d)
    (ontable d)
    (handempty))
  (:goal (and
    (on d c)
    (on c b)
    (on b a)
    (ontable a))))
